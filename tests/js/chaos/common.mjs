// Shared by the chaos workload clients: a kafkajs client that gives up quickly (the harness, not
// kafkajs, decides what a failure means), a history writer (one JSON object a line, with the wall
// clock in ms, so the history lines up with the fault schedule), and the stop file.
import { existsSync, createWriteStream } from 'node:fs';
import { Kafka, logLevel } from 'kafkajs';

export function client(brokers, clientId) {
  return new Kafka({
    brokers: brokers.split(','), clientId, logLevel: logLevel.NOTHING,
    connectionTimeout: 2000, requestTimeout: 6000,
    retry: { retries: 4, initialRetryTime: 100, maxRetryTime: 1000 },
  });
}

export function history(path, proc) {
  const out = createWriteStream(path, { flags: 'a' });
  const emit = (ev) => out.write(JSON.stringify({ t: Date.now(), proc, ...ev }) + '\n');
  const close = () => new Promise((resolve) => out.end(resolve));
  return { emit, close };
}

export const stopped = (stopFile) => existsSync(stopFile);
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// A promise that rejects after ms (kafkajs can wait much longer than its requestTimeout when a
// broker is paused with SIGSTOP: the socket stays open and silent).
export function deadline(promise, ms, what) {
  let timer;
  const t = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms); });
  return Promise.race([promise, t]).finally(() => clearTimeout(timer));
}
