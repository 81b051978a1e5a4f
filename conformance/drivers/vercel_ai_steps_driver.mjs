// The vercel_ai driver with `stopWhen: isStepCount(5)`, the docs' tool-calling example
// (predicates/vercel_ai_steps.py): same SPEC and RESULT as vercel_ai_driver.mjs.
process.env.STOPBENCH_VERCEL_STEPS = "5";
await import("./vercel_ai_driver.mjs");
