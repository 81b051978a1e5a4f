"""The provider wires (Chat Completions, Anthropic Messages, Responses, Gemini): each API's finish table
and how the replay server delivers an error."""
