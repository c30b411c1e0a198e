// The console's only way to the broker: GET requests to its public endpoints, with the bearer
// token from sessionStorage when one was given. No cookies, and nothing that changes state.
export class AuthError extends Error {}

const TOKEN = 'floe.token';
export const token = {
  get: () => sessionStorage.getItem(TOKEN),
  set: (t) => sessionStorage.setItem(TOKEN, t),
  clear: () => sessionStorage.removeItem(TOKEN),
};

async function request(path, accept = 'application/json', signal = undefined) {
  const headers = { Accept: accept };
  const t = token.get();
  if (t) headers.Authorization = `Bearer ${t}`;
  const res = await fetch(path, { method: 'GET', headers, credentials: 'omit', cache: 'no-store', signal });
  if (res.status === 401) throw new AuthError('a valid bearer token is needed');
  return res;
}

export async function get(path) {
  const res = await request(path);
  const text = await res.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch { body = null; }
  if (!res.ok) {
    const msg = body && body.error ? body.error.message : `${res.status} ${res.statusText}`;
    const e = new Error(msg);
    e.status = res.status;
    throw e;
  }
  return body;
}

// Like get(), but a failure gives null (optional panels such as /readyz's 503 still answer JSON).
export async function getAllowing(path, statuses) {
  const res = await request(path);
  if (!res.ok && !statuses.includes(res.status)) throw new Error(`${path}: ${res.status}`);
  return res.json();
}

export async function download(path, filename) {
  const res = await request(path);
  if (!res.ok) throw new Error(`${res.status} ${res.statusText}`);
  const blob = await res.blob();
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

// Server-Sent Events over fetch (EventSource cannot send the bearer token): calls
// onEvent(name, data) for each event as it arrives, until the server ends the stream or
// `signal` aborts it (then it resolves quietly).
export async function stream(path, onEvent, signal) {
  let res;
  try {
    res = await request(path, 'text/event-stream', signal);
  } catch (e) {
    if (signal && signal.aborted) return;
    throw e;
  }
  if (!res.ok) {
    let msg = `${res.status} ${res.statusText}`;
    try { msg = (await res.json()).error.message; } catch { /* not JSON */ }
    const e = new Error(msg);
    e.status = res.status;
    throw e;
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true });
      let at;
      while ((at = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, at);
        buf = buf.slice(at + 2);
        let name = 'message', data = '';
        for (const line of frame.split('\n')) {
          if (line.startsWith('event: ')) name = line.slice(7);
          else if (line.startsWith('data: ')) data += line.slice(6);
        }
        if (data) onEvent(name, JSON.parse(data));
      }
    }
  } catch (e) {
    if (signal && signal.aborted) return;
    throw e;
  }
}

export const enc = encodeURIComponent;
