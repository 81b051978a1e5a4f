// A kept-back program: Genkit (genkit + @genkit-ai/google-genai), written the way its docs write
// tool calling (ai.defineTool + ai.generate, which runs the tool loop itself), on the Gemini API,
// pointed at stopbench check through the variables docs/check.md lists. The tools are the
// bench's, defined from STOPBENCH_TOOLS and run by POST $STOPBENCH_TOOLS_URL/<name>.
import fs from 'node:fs';
import { genkit } from 'genkit';
import { googleAI } from '@genkit-ai/google-genai';

const ai = genkit({
  plugins: [googleAI({ apiKey: process.env.GEMINI_API_KEY, baseUrl: process.env.GOOGLE_GEMINI_BASE_URL })],
});

const tools = JSON.parse(process.env.STOPBENCH_TOOLS).map((spec) =>
  ai.defineTool(
    { name: spec.name, description: spec.description, inputJsonSchema: spec.parameters },
    async (input) => {
      const response = await fetch(`${process.env.STOPBENCH_TOOLS_URL}/${spec.name}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(input ?? {}),
      });
      const body = await response.json();
      return body.content;
    },
  ),
);

function report(ok, reason, final) {
  if (process.env.STOPBENCH_RESULT) {
    fs.writeFileSync(process.env.STOPBENCH_RESULT, JSON.stringify({ ok, reason, final: final ?? '' }));
  }
}

try {
  const response = await ai.generate({
    model: googleAI.model(process.env.STOPBENCH_MODEL),
    prompt: process.env.STOPBENCH_PROMPT,
    tools,
  });
  console.log(response.text);
  report(true, response.finishReason ?? 'stop', response.text);
} catch (err) {
  console.error(err);
  report(false, err?.name ?? 'error', String(err?.message ?? err));
  process.exitCode = 1;
}
