// A LangGraph.js agent built by hand on StateGraph with ToolNode and toolsCondition, as LangGraph.js's
// reference writes one (https://reference.langchain.com/javascript/functions/_langchain_langgraph.prebuilt.toolsCondition.html):
// new StateGraph(MessagesAnnotation) with an agent node (the model with bindTools(tools)), a ToolNode(tools)
// and addConditionalEdges('agent', toolsCondition), which routes to the tools while the last message has
// calls, else to END; an edge goes back from the tools to the agent. The graph is compiled and invoked once
// with LangGraph.js's defaults (recursionLimit 25 supersteps; the model clients' own retries): the same
// graph as the Python langgraph row, in JavaScript.
//
// Model: ChatOpenAI on Chat Completions; on a Responses sequence (STOPBENCH_DIALECT=openai-responses) with
// its documented useResponsesApi, and on an Anthropic sequence ChatAnthropic. The clients read
// OPENAI_BASE_URL / OPENAI_API_KEY and ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY.
// Tools: the bench's, over MCP with @langchain/mcp-adapters' MultiServerMCPClient, from the stdio server of
// STOPBENCH_MCP_COMMAND.
// It writes {"ok", "reason", "final"} to STOPBENCH_RESULT: ok when invoke() returned (reason: the last
// message's finish_reason, its Responses status or its Anthropic stop_reason), else ok=false with the
// error's class name; it exits 0 either way.
import { writeFileSync } from 'node:fs';
import { ChatAnthropic } from '@langchain/anthropic';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { ChatOpenAI } from '@langchain/openai';

const env = process.env;

function model() {
  if (env.STOPBENCH_DIALECT === 'anthropic') return new ChatAnthropic({ model: env.STOPBENCH_MODEL || 'claude-sonnet-4-5' });
  return new ChatOpenAI({
    model: env.STOPBENCH_MODEL || 'gpt-4o',
    useResponsesApi: env.STOPBENCH_DIALECT === 'openai-responses',
  });
}

function mcpClient() {
  const [command, ...args] = JSON.parse(env.STOPBENCH_MCP_COMMAND);
  return new MultiServerMCPClient({
    mcpServers: {
      stopbench: { transport: 'stdio', command, args, env: { STOPBENCH_TOOLS_URL: env.STOPBENCH_TOOLS_URL ?? '' } },
    },
  });
}

function buildGraph(llm, tools) {
  const llmWithTools = llm.bindTools(tools);
  const agent = async (state) => ({ messages: [await llmWithTools.invoke(state.messages)] });
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', agent)
    .addNode('tools', new ToolNode(tools))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', toolsCondition, ['tools', END])
    .addEdge('tools', 'agent')
    .compile();
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
  const graph = buildGraph(model(), await client.getTools());
  const result = await graph.invoke({ messages: [{ role: 'user', content: env.STOPBENCH_PROMPT ?? 'Say hello.' }] });
  const last = result.messages.at(-1);
  const meta = last?.response_metadata ?? {};
  outcome = { ok: true, reason: String(meta.finish_reason ?? meta.status ?? meta.stop_reason ?? 'end'), final: text(last) };
} catch (error) {
  outcome = { ok: false, reason: error?.constructor?.name ?? 'Error', final: String(error?.message ?? error) };
} finally {
  await client?.close().catch(() => {});
}
if (env.STOPBENCH_RESULT) writeFileSync(env.STOPBENCH_RESULT, JSON.stringify(outcome));
process.exit(0);
