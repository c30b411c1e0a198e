// The console's only way to the broker: GET requests to its public endpoints, with the bearer
// token from sessionStorage when one was given. No cookies, and nothing that changes state.
export class AuthError extends Error {}

const TOKEN = 'floe.token';
export const token = {
  get: () => sessionStorage.getItem(TOKEN),
  set: (t) => sessionStorage.setItem(TOKEN, t),
  clear: () => sessionStorage.removeItem(TOKEN),
};

async function request(path) {
  const headers = { Accept: 'application/json' };
  const t = token.get();
  if (t) headers.Authorization = `Bearer ${t}`;
  const res = await fetch(path, { method: 'GET', headers, credentials: 'omit', cache: 'no-store' });
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

export const enc = encodeURIComponent;
