// The console's shell: hash routes (#/page/arg?state), the login dialog, theme and time zone.
// Every view's state lives in the URL, so each one is a deep link.
import { AuthError, get, token } from './api.js';
import { h, mount, prefs } from './dom.js';
import * as pages from './pages.js';
import { messages } from './messages.js';
import { parseHash } from './route.js';

const routes = {
  overview: pages.overview,
  topics: pages.topics,
  topic: pages.topic,
  messages,
  groups: pages.groups,
  lake: pages.lake,
  ingest: pages.ingest,
  cluster: pages.cluster,
  security: pages.security,
};

let current = null; // the page's cleanup (timers)
let checked = undefined; // the token last accepted (null: none needed)

async function render() {
  if (current) { current(); current = null; }
  const { page, args, params } = parseHash();
  const main = document.getElementById('main');
  const nav = page === 'topic' ? 'topics' : page;
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.dataset.page === nav) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const fn = routes[page];
  if (!fn) { mount(main, h('h1', {}, 'Not found'), h('p', {}, `No page ${page}.`)); return; }
  try {
    // One request tells whether the token is good, before a page sends several at once (each
    // refused one would count as a failed attempt and be answered later and later).
    if (checked !== token.get()) {
      await get('/v1/console/settings');
      checked = token.get();
    }
    const cleanup = await fn(main, args, params);
    if (typeof cleanup === 'function') current = cleanup;
  } catch (e) {
    if (e instanceof AuthError) { showLogin(token.get() ? 'That token was refused.' : ''); return; }
    mount(main, h('h1', {}, 'Error'), h('p', { class: 'error', role: 'alert' }, String(e.message || e)));
  }
}

function showLogin(message) {
  const dlg = document.getElementById('login');
  document.getElementById('login-error').textContent = message || '';
  mount(document.getElementById('main'), h('h1', {}, 'Sign in'), h('p', {}, 'A bearer token is needed to read this broker.'));
  if (!dlg.open) dlg.showModal();
  document.getElementById('token').focus();
}

function applyTheme() {
  const t = prefs.theme;
  if (t === 'system') document.documentElement.removeAttribute('data-theme');
  else document.documentElement.setAttribute('data-theme', t);
  document.getElementById('theme').textContent = `Theme: ${t}`;
}

function applyTz() {
  const b = document.getElementById('tz');
  b.textContent = prefs.utc ? 'UTC' : 'Local time';
  b.setAttribute('aria-pressed', String(!prefs.utc));
}

function start() {
  applyTheme();
  applyTz();
  document.getElementById('theme').addEventListener('click', () => {
    const order = ['system', 'light', 'dark'];
    prefs.theme = order[(order.indexOf(prefs.theme) + 1) % order.length];
    applyTheme();
  });
  document.getElementById('tz').addEventListener('click', () => { prefs.utc = !prefs.utc; applyTz(); render(); });
  const logout = document.getElementById('logout');
  logout.hidden = !token.get();
  logout.addEventListener('click', () => { token.clear(); logout.hidden = true; render(); });
  document.getElementById('login-form').addEventListener('submit', (ev) => {
    const v = document.getElementById('token').value.trim();
    if (!v) { ev.preventDefault(); return; }
    token.set(v);
    document.getElementById('token').value = '';
    logout.hidden = false;
    render();
  });
  // Keyboard: "/" focuses the page's first filter; g then a letter goes to a page.
  let g = false;
  document.addEventListener('keydown', (ev) => {
    const typing = ['INPUT', 'SELECT', 'TEXTAREA'].includes(document.activeElement?.tagName);
    if (typing || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (ev.key === '/') {
      const f = document.querySelector('main input, main select');
      if (f) { ev.preventDefault(); f.focus(); }
      return;
    }
    const go = { o: 'overview', t: 'topics', m: 'messages', c: 'groups', l: 'lake', i: 'ingest', k: 'cluster', s: 'security' };
    if (g && go[ev.key]) { location.hash = `#/${go[ev.key]}`; g = false; return; }
    g = ev.key === 'g';
  });
  window.addEventListener('hashchange', () => { render(); document.getElementById('main').focus({ preventScroll: true }); });
  render();
}

start();
