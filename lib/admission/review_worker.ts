/**
 * @module admission/review_worker
 * The worker thread that decides reviews (started by admission/queue.ts, messages typed there):
 * it loads the templates once, then runs `reviewBody` (JSON parse, static checks, rendering, the
 * `haproxy -c` xray) for each body it is handed. The cluster's default IngressClass is asked
 * from the main thread, which holds the cluster client.
 */
import { loadTemplates } from "../render/mod.ts";
import type { FromWorker, ToWorker, WorkerInit } from "./queue.ts";
import { reviewBody, type ReviewOptions, type ReviewPolicy } from "./review.ts";

/** The worker's global scope, typed for what is used here (the lib of this file is the window's). */
const scope = globalThis as unknown as {
  onmessage: ((e: MessageEvent<ToWorker>) => void) | null;
  postMessage(msg: FromWorker): void;
};

let options: Promise<ReviewOptions> | null = null;
const classAnswers = new Map<number, (value: string | null) => void>();
let nextAsk = 0;

function askDefaultClass(): Promise<string | null> {
  return new Promise((resolve) => {
    const ask = ++nextAsk;
    classAnswers.set(ask, resolve);
    scope.postMessage({ type: "defaultClass", ask });
  });
}

async function reviewOptions(init: WorkerInit): Promise<ReviewOptions> {
  const x = init.xray;
  return {
    ingressClass: init.ingressClass,
    restrictToNamespace: init.restrictToNamespace,
    ...(init.askDefaultClass ? { defaultClass: askDefaultClass } : {}),
    xray: x ? { templates: await loadTemplates(x.customTemplates), haproxy: x.haproxy, timeoutMs: x.timeoutMs } : null,
  };
}

async function review(id: number, body: Uint8Array, deadline: number, policy: ReviewPolicy): Promise<void> {
  let result: FromWorker & { type: "result" };
  try {
    // Already answered as late by the main thread: no work for nobody.
    if (Date.now() >= deadline) result = { type: "result", id, result: { failed: "past the deadline" } };
    else result = { type: "result", id, result: await reviewBody(body, { ...await options!, ...policy }, deadline) };
  } catch (err) {
    result = { type: "result", id, result: { failed: (err as Error).message } };
  }
  scope.postMessage(result);
}

scope.onmessage = ({ data }) => {
  switch (data.type) {
    case "init":
      options = reviewOptions(data.init);
      options.then(
        () => scope.postMessage({ type: "ready" }),
        (err) => scope.postMessage({ type: "initFailed", message: (err as Error).message }),
      );
      return;
    case "review":
      return void review(data.id, data.body, data.deadline, data.policy);
    case "defaultClass":
      classAnswers.get(data.ask)?.(data.value);
      classAnswers.delete(data.ask);
  }
};
