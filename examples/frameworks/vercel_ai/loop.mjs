// An agent on the Vercel AI SDK, written as its Agents overview writes one
// (https://ai-sdk.dev/docs/agents/overview): a ToolLoopAgent with the OpenAI provider and tools, and
// agent.generate({prompt}). Its loop and its stop condition are the SDK's defaults (isStepCount(20)).
//
// Model: openai(id), the provider's default factory, speaks the Responses API; on a Chat Completions
// sequence (STOPBENCH_DIALECT=openai-chat) the program takes openai.chat(id), the provider's documented
// Chat factory, and on an Anthropic sequence anthropic(id) from @ai-sdk/anthropic, so that one loop is
// tried on each wire. The Anthropic provider reads ANTHROPIC_BASE_URL as the prefix of /messages (its
// default is https://api.anthropic.com/v1): framework.json's env adds the /v1 the bench's URL lacks.
// Tools: the bench's, over MCP with the SDK's own MCP client (https://ai-sdk.dev/docs/ai-sdk-core/mcp-tools):
// STOPBENCH_MCP_URL (streamable HTTP, the transport the docs recommend) or the stdio server of
// STOPBENCH_MCP_COMMAND; without either, function tools built from STOPBENCH_TOOLS that POST to
// $STOPBENCH_TOOLS_URL/<name>.
// It writes {"ok", "reason", "final"} to STOPBENCH_RESULT: ok when generate() returned (reason: the last
// step's finishReason), else ok=false with the error's class name; it exits 0 either way.
import { writeFileSync } from 'node:fs';
import { ToolLoopAgent, jsonSchema, tool } from 'ai';
import { anthropic } from '@ai-sdk/anthropic';
import { openai } from '@ai-sdk/openai';
import { createMCPClient } from '@ai-sdk/mcp';
import { StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';

const env = process.env;

function model() {
  const id = env.STOPBENCH_MODEL || 'gpt-4o';
  if (env.STOPBENCH_DIALECT === 'anthropic') return anthropic(id);
  return env.STOPBENCH_DIALECT === 'openai-chat' ? openai.chat(id) : openai(id);
}

async function connectMCP() {
  if (env.STOPBENCH_MCP_URL) {
    console.error(`loop.mjs: tools over MCP, streamable HTTP ${env.STOPBENCH_MCP_URL}`);
    return createMCPClient({ transport: { type: 'http', url: env.STOPBENCH_MCP_URL } });
  }
  if (env.STOPBENCH_MCP_COMMAND) {
    const [command, ...args] = JSON.parse(env.STOPBENCH_MCP_COMMAND);
    console.error(`loop.mjs: tools over MCP, stdio ${command}`);
    // The stdio transport passes the child only a default set of variables: the server needs the endpoint.
    return createMCPClient({
      transport: new StdioMCPTransport({ command, args, env: { STOPBENCH_TOOLS_URL: env.STOPBENCH_TOOLS_URL ?? '' } }),
    });
  }
  return undefined;
}

function functionTools() {
  console.error('loop.mjs: function tools calling STOPBENCH_TOOLS_URL');
  const tools = {};
  for (const spec of JSON.parse(env.STOPBENCH_TOOLS || '[]')) {
    tools[spec.name] = tool({
      description: spec.description,
      inputSchema: jsonSchema(spec.parameters),
      execute: async (input) => {
        const res = await fetch(`${env.STOPBENCH_TOOLS_URL}/${encodeURIComponent(spec.name)}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(input ?? {}),
        });
        const { content, is_error: isError } = await res.json();
        if (isError) throw new Error(content);
        return content;
      },
    });
  }
  return tools;
}

let mcpClient;
let outcome;
try {
  mcpClient = await connectMCP();
  const tools = mcpClient ? await mcpClient.tools() : functionTools();
  const agent = new ToolLoopAgent({ model: model(), tools });
  const result = await agent.generate({ prompt: env.STOPBENCH_PROMPT ?? 'Say hello.' });
  outcome = { ok: true, reason: String(result.finishReason), final: result.text ?? '' };
} catch (error) {
  outcome = { ok: false, reason: error?.constructor?.name ?? 'Error', final: String(error?.message ?? error) };
} finally {
  await mcpClient?.close().catch(() => {});
}
if (env.STOPBENCH_RESULT) writeFileSync(env.STOPBENCH_RESULT, JSON.stringify(outcome));
process.exit(0);
