// A kept-back program: the OpenAI Agents SDK for JavaScript (@openai/agents), written the way its
// docs write an agent with MCP tools (Agent + MCPServerStdio + run), pointed at stopbench check
// through the variables docs/check.md lists. Its default model provider speaks the Responses API;
// on a Chat Completions sequence the program switches it with setOpenAIAPI('chat_completions').
import fs from 'node:fs';
import { Agent, run, MCPServerStdio, setOpenAIAPI, setTracingDisabled } from '@openai/agents';

setTracingDisabled(true); // no tracing export: there is no real OpenAI host here
if (process.env.STOPBENCH_DIALECT === 'openai-chat') setOpenAIAPI('chat_completions');

const [command, ...args] = JSON.parse(process.env.STOPBENCH_MCP_COMMAND);
const server = new MCPServerStdio({ name: 'stopbench tools', command, args });

function report(ok, reason, final) {
  if (process.env.STOPBENCH_RESULT) {
    fs.writeFileSync(process.env.STOPBENCH_RESULT, JSON.stringify({ ok, reason, final: final ?? '' }));
  }
}

await server.connect();
try {
  const agent = new Agent({
    name: 'Assistant',
    instructions: 'You are a helpful coding assistant. Use the tools when you need them.',
    model: process.env.STOPBENCH_MODEL,
    mcpServers: [server],
  });
  const result = await run(agent, process.env.STOPBENCH_PROMPT);
  console.log(result.finalOutput);
  report(true, 'final_output', String(result.finalOutput ?? ''));
} catch (err) {
  console.error(err);
  report(false, err?.name ?? 'error', String(err?.message ?? err));
  process.exitCode = 1;
} finally {
  await server.close();
}
