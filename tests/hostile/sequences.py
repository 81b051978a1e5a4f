"""Sequence files the hostile tests write into their own folders."""

ONE_ANSWER = """\
title: one answer
kind: constructed
dialect: openai-chat
source: tests/hostile
then: end
turns:
  - finish: stop
    content: "answer"
"""
"""One plain answer: the smallest catalogue a command can run, so a test's cost is the hostile part."""
