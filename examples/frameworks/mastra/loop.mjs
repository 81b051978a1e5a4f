// An agent on Mastra, written as its Agents and MCP pages write one
// (https://mastra.ai/docs/agents/overview, https://mastra.ai/docs/connections/mcp): an Agent with a model
// router string and agent.generate(prompt) with the tools of an MCPClient. Its loop and its step limit
// are Mastra's defaults (maxSteps 5).
//
// Model: "openai/<id>", the model router's OpenAI provider, speaks the Responses API (it reads
// OPENAI_BASE_URL and OPENAI_API_KEY); on a Chat Completions sequence (STOPBENCH_DIALECT=openai-chat)
// the program takes the documented form for an OpenAI-compatible endpoint, {id, url}, which speaks
// Chat Completions, and on an Anthropic sequence "anthropic/<id>", so that one loop is tried on each wire.
// The router's Anthropic provider reads ANTHROPIC_BASE_URL as the prefix of /messages (its default is
// https://api.anthropic.com/v1): framework.json's env adds the /v1 the bench's URL lacks.
// Tools: the bench's, over MCP with @mastra/mcp's MCPClient: STOPBENCH_MCP_URL (streamable HTTP) or the
// stdio server of STOPBENCH_MCP_COMMAND; passed as runtime toolsets (listToolsets(), the MCP page's form
// for a per-request server), which keep the server's tool names (listTools() renames them
// "<server>_<tool>", names the bench's scripted calls do not use). Without either variable, function
// tools built from STOPBENCH_TOOLS (createTool) that POST to $STOPBENCH_TOOLS_URL/<name>.
// It writes {"ok", "reason", "final"} to STOPBENCH_RESULT: ok when generate() returned (reason: its
// finishReason), else ok=false with the error's class name; it exits 0 either way.
import { writeFileSync } from 'node:fs';
import { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import { MCPClient } from '@mastra/mcp';

const env = process.env;

function model() {
  const id = env.STOPBENCH_MODEL || 'gpt-4o';
  if (env.STOPBENCH_DIALECT === 'anthropic') return `anthropic/${id}`;
  if (env.STOPBENCH_DIALECT === 'openai-chat') {
    return { id: `custom/${id}`, url: env.OPENAI_BASE_URL, apiKey: env.OPENAI_API_KEY };
  }
  return `openai/${id}`;
}

function mcpClient() {
  if (env.STOPBENCH_MCP_URL) {
    console.error(`loop.mjs: tools over MCP, streamable HTTP ${env.STOPBENCH_MCP_URL}`);
    return new MCPClient({ servers: { stopbench: { url: new URL(env.STOPBENCH_MCP_URL) } } });
  }
  if (env.STOPBENCH_MCP_COMMAND) {
    const [command, ...args] = JSON.parse(env.STOPBENCH_MCP_COMMAND);
    console.error(`loop.mjs: tools over MCP, stdio ${command}`);
    // A stdio server inherits only a default set of variables: it needs the tool endpoint.
    return new MCPClient({
      servers: { stopbench: { command, args, env: { STOPBENCH_TOOLS_URL: env.STOPBENCH_TOOLS_URL ?? '' } } },
    });
  }
  return undefined;
}

function functionTools() {
  console.error('loop.mjs: function tools calling STOPBENCH_TOOLS_URL');
  const tools = {};
  for (const spec of JSON.parse(env.STOPBENCH_TOOLS || '[]')) {
    tools[spec.name] = createTool({
      id: spec.name,
      description: spec.description,
      inputSchema: spec.parameters,
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

let mcp;
let outcome;
try {
  mcp = mcpClient();
  const agent = new Agent({
    id: 'stopbench-agent',
    name: 'Stopbench Agent',
    instructions: 'You are a helpful assistant. Use the tools to complete the task.',
    model: model(),
    tools: mcp ? {} : functionTools(),
  });
  const options = mcp ? { toolsets: await mcp.listToolsets() } : {};
  const response = await agent.generate(env.STOPBENCH_PROMPT ?? 'Say hello.', options);
  outcome = { ok: true, reason: String(response.finishReason), final: response.text ?? '' };
} catch (error) {
  outcome = { ok: false, reason: error?.constructor?.name ?? 'Error', final: String(error?.message ?? error) };
} finally {
  await mcp?.disconnect().catch(() => {});
}
if (env.STOPBENCH_RESULT) writeFileSync(env.STOPBENCH_RESULT, JSON.stringify(outcome));
process.exit(0);
