// An agent on LangChain.js 1.x, written as its Agents and MCP pages write one
// (https://docs.langchain.com/oss/javascript/langchain/agents,
// https://docs.langchain.com/oss/javascript/langchain/mcp): createAgent with a ChatOpenAI model and the
// tools of a MultiServerMCPClient, then agent.invoke({messages}). Its loop and its limit are the
// defaults (LangGraph's recursionLimit 25 graph steps; ChatOpenAI's own retries).
//
// Model: ChatOpenAI speaks Chat Completions by default; on a Responses sequence
// (STOPBENCH_DIALECT=openai-responses) the program sets its documented useResponsesApi, and on an
// Anthropic sequence it takes ChatAnthropic, so that one loop is tried on each wire. The clients read
// OPENAI_BASE_URL / OPENAI_API_KEY and ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY.
// Tools: the bench's, over MCP with @langchain/mcp-adapters: STOPBENCH_MCP_URL (streamable HTTP) or the
// stdio server of STOPBENCH_MCP_COMMAND; without either, function tools built from STOPBENCH_TOOLS
// (tool()) that POST to $STOPBENCH_TOOLS_URL/<name>.
// It writes {"ok", "reason", "final"} to STOPBENCH_RESULT: ok when invoke() returned (reason: the last
// message's finish_reason, its Responses status or its Anthropic stop_reason), else ok=false with the
// error's class name; it exits 0 either way.
import { writeFileSync } from 'node:fs';
import { createAgent, tool } from 'langchain';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';

const env = process.env;

function model() {
  if (env.STOPBENCH_DIALECT === 'anthropic') return new ChatAnthropic({ model: env.STOPBENCH_MODEL || 'claude-sonnet-4-5' });
  return new ChatOpenAI({
    model: env.STOPBENCH_MODEL || 'gpt-4o',
    useResponsesApi: env.STOPBENCH_DIALECT === 'openai-responses',
  });
}

function mcpClient() {
  if (env.STOPBENCH_MCP_URL) {
    console.error(`loop.mjs: tools over MCP, streamable HTTP ${env.STOPBENCH_MCP_URL}`);
    return new MultiServerMCPClient({ mcpServers: { stopbench: { transport: 'http', url: env.STOPBENCH_MCP_URL } } });
  }
  if (env.STOPBENCH_MCP_COMMAND) {
    const [command, ...args] = JSON.parse(env.STOPBENCH_MCP_COMMAND);
    console.error(`loop.mjs: tools over MCP, stdio ${command}`);
    return new MultiServerMCPClient({
      mcpServers: {
        stopbench: { transport: 'stdio', command, args, env: { STOPBENCH_TOOLS_URL: env.STOPBENCH_TOOLS_URL ?? '' } },
      },
    });
  }
  return undefined;
}

function functionTools() {
  console.error('loop.mjs: function tools calling STOPBENCH_TOOLS_URL');
  return JSON.parse(env.STOPBENCH_TOOLS || '[]').map((spec) =>
    tool(
      async (input) => {
        const res = await fetch(`${env.STOPBENCH_TOOLS_URL}/${encodeURIComponent(spec.name)}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(input ?? {}),
        });
        const { content, is_error: isError } = await res.json();
        if (isError) throw new Error(content);
        return content;
      },
      { name: spec.name, description: spec.description, schema: spec.parameters },
    ),
  );
}

function text(message) {
  const content = message?.content;
  if (typeof content === 'string') return content;
  return (content ?? []).map((part) => (typeof part === 'string' ? part : part.text ?? '')).join('');
}

let client;
let outcome;
try {
  client = mcpClient();
  const tools = client ? await client.getTools() : functionTools();
  const agent = createAgent({ model: model(), tools });
  const result = await agent.invoke({ messages: [{ role: 'user', content: env.STOPBENCH_PROMPT ?? 'Say hello.' }] });
  const last = result.messages.at(-1);
  const meta = last?.response_metadata ?? {};
  outcome = { ok: true, reason: String(meta.finish_reason ?? meta.status ?? meta.stop_reason ?? 'completed'), final: text(last) };
} catch (error) {
  outcome = { ok: false, reason: error?.constructor?.name ?? 'Error', final: String(error?.message ?? error) };
} finally {
  await client?.close().catch(() => {});
}
if (env.STOPBENCH_RESULT) writeFileSync(env.STOPBENCH_RESULT, JSON.stringify(outcome));
process.exit(0);
