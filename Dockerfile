# stopbench as a container: the wheel (with the shipped catalogue, predicates and golden files) on a slim
# Python, no browser. Mount your project at /work: your sequences/, predicates/ and expected/ add to the
# shipped ones, and the reports are written there.
#
#   docker build -t stopbench .
#   docker run --rm -u "$(id -u):$(id -g)" -v "$PWD:/work" stopbench          # stopbench run
#   docker run --rm -u "$(id -u):$(id -g)" -v "$PWD:/work" stopbench check -- python my_loop.py
#
# The entry command is the one tests/cli/test_container.py runs from an empty folder.

FROM python:3.12-slim AS build
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY bench/ bench/
COPY sequences/ sequences/
COPY predicates/ predicates/
COPY expected/ expected/
RUN pip install --no-cache-dir "build==1.*" && python -m build --wheel --outdir /dist .

FROM python:3.12-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
COPY --from=build /dist/ /tmp/dist/
RUN pip install --no-cache-dir /tmp/dist/*.whl && rm -rf /tmp/dist \
    && useradd --create-home --uid 1000 bench && install -d -o 1000 -g 1000 /work
USER 1000
WORKDIR /work
ENTRYPOINT ["stopbench"]
CMD ["run"]
