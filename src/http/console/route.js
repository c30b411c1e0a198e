// The URL is the view's state: #/page/arg?key=value.
export function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, q] = raw.split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  return { page: parts[0] || 'overview', args: parts.slice(1), params: new URLSearchParams(q || '') };
}

// Replaces the URL's state without adding a history entry per keystroke.
export function setParams(params) {
  const { page, args } = parseHash();
  const q = params.toString();
  const hash = `#/${[page, ...args].map(encodeURIComponent).join('/')}${q ? `?${q}` : ''}`;
  history.replaceState(null, '', hash);
}
