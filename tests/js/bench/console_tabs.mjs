// Ten console tabs tailing one topic, for bench/console/run.sh: opens N tabs of headless Debian
// chromium (each in its own browser context: see below) on #/messages/TOPIC, turns each one's live tail on (a follow=true event stream), prints
// READY once every tab is tailing, and keeps them tailing until the file STOP exists (checked
// every 200 ms, at most 300 s). Then prints, per tab, the records it received and the newest
// offset it shows, and exits 1 if a tab received none or showed an error.
// usage: node console_tabs.mjs CONSOLE_URL TOPIC TABS STOP_FILE
import { existsSync } from 'node:fs';
import puppeteer from 'puppeteer-core';

const [base, topic, tabsArg, stopFile] = process.argv.slice(2);
const tabs = Number(tabsArg || 10);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-timer-throttling',
    '--disable-renderer-backgrounding', '--disable-backgrounding-occluded-windows'],
});
let failed = 0;
try {
  const pages = [];
  for (let i = 0; i < tabs; i++) {
    // One browser context each: a browser keeps at most 6 HTTP/1.1 connections per origin and
    // profile, and each tailing tab holds one open (its event stream), so a 7th tab of one
    // profile would wait for a connection forever. Ten users, not ten tabs of one user.
    const ctx = await browser.createBrowserContext();
    const page = await ctx.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    await page.goto(`${base}#/messages/${encodeURIComponent(topic)}?limit=5`, { waitUntil: 'domcontentloaded', timeout: 120000 });
    for (let k = 0; k < 450 && !(await page.$eval('#search-status', (e) => e.textContent.includes('records shown')).catch(() => false)); k++) await sleep(200);
    if (!(await page.$('#tail'))) throw new Error(`tab ${i} did not render the Messages page: ${await page.evaluate(() => document.body.innerText.slice(0, 400))} ${errors.join('; ')}`);
    await page.click('#tail');
    pages.push({ page, errors });
  }
  for (const { page } of pages) {
    for (let k = 0; k < 100 && !(await page.$eval('#search-status', (e) => e.textContent.startsWith('Tailing')).catch(() => false)); k++) await sleep(100);
  }
  const first = await Promise.all(pages.map(({ page }) => page.$eval('#records tr', (tr) => Number(tr.dataset.offset)).catch(() => -1)));
  console.log('READY');
  for (let k = 0; k < 1500 && !existsSync(stopFile); k++) await sleep(200);
  for (const [i, { page, errors }] of pages.entries()) {
    const [status, newest] = await page.evaluate(() => [document.getElementById('search-status').textContent,
      Number(document.querySelector('#records tr')?.dataset.offset ?? -1)]);
    const ok = newest > first[i] && !errors.length && !/failed/i.test(status);
    if (!ok) failed++;
    console.log(`tab ${i}: newest offset shown ${first[i]} -> ${newest}; ${status}${errors.length ? `; errors: ${errors.join('; ')}` : ''}${ok ? '' : ' FAIL'}`);
  }
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
