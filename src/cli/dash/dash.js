/*
** dash.js -- the dashboard of `sqlq serve` (served as /dash/dash.js;
** docs/serve.md).  One page, routed by the URL's fragment:
**
**   #/                    every queue: counts, oldest ready job, chart
**   #/queue/Q?state=S&search=T   a queue's jobs, with its actions
**   #/schedules #/limits #/locks #/rings[/R] #/pools[/P] #/subscriptions #/health
**
** Everything shown comes from the JSON API (/api/v1/) and is put in the
** page as text (textContent, never HTML), so a payload, an error or a name
** cannot inject markup.  Actions are POSTs with the header X-Sqlq-Csrf: 1.
** Live pages poll every REFRESH_MS, and not while the tab is hidden: the
** cost on the database is measured in docs/benchmarks.md.
*/
'use strict';

const REFRESH_MS = 10000;       /* overview and queue pages */
const SLOW_REFRESH_MS = 30000;  /* schedules, subscriptions, health */
const HISTORY_MS = 60000;       /* the per-minute chart */
const LIST_LIMIT = 100;         /* jobs listed on a queue's page */
const PAYLOAD_SHOWN = 2000;     /* characters of a text payload shown */
const HEX_SHOWN = 512;          /* bytes of a binary payload shown */

let server = {read_only: true, backend: '', version: ''};
let timer = null;        /* the pending refresh of the page shown */
let generation = 0;      /* bumped on each route: late answers are dropped */
let historyMissing = false; /* GET .../history answered 404: no chart */
const history = new Map();  /* queue -> {at, minutes} */

/* ---------------------------------------------------------------------
** DOM helpers: every string becomes a text node.
*/

function el(tag, attrs, ...children) {
  const e = tag === 'svg' || tag === 'rect' || tag === 'title' || tag === 'line'
    ? document.createElementNS('http://www.w3.org/2000/svg', tag)
    : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'onclick') e.addEventListener('click', v);
    else if (k === 'onchange') e.addEventListener('change', v);
    else if (k === 'onsubmit') e.addEventListener('submit', v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function show(...nodes) {
  const main = document.getElementById('main');
  main.replaceChildren(...nodes.filter(n => n !== null && n !== undefined && n !== false));
}

function status(text, isError) {
  const f = document.getElementById('status');
  f.textContent = text;
  f.className = isError ? 'error' : '';
}

function num(n) {
  return n === null || n === undefined ? '' : Number(n).toLocaleString('en-US');
}

// A queue's count k as text: "10,000+" when it stopped at the server's
// limit (the API lists such counts in "more").
function count(q, k) {
  return num(q[k]) + ((q.more || []).includes(k) ? '+' : '');
}

function age(seconds) {
  if (seconds === null || seconds === undefined) return '';
  if (seconds < 1) return '<1s';
  if (seconds < 90) return Math.round(seconds) + 's';
  if (seconds < 5400) return Math.round(seconds / 60) + 'm';
  if (seconds < 172800) return (seconds / 3600).toFixed(1) + 'h';
  return (seconds / 86400).toFixed(1) + 'd';
}

function table(headers, rows, emptyText) {
  if (rows.length === 0) return el('p', {class: 'empty'}, emptyText);
  return el('table', {},
    el('thead', {}, el('tr', {}, headers.map(h =>
      el('th', {class: h.num ? 'num' : null}, h.label || h)))),
    el('tbody', {}, rows));
}

/* ---------------------------------------------------------------------
** The API.
*/

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function api(path) {
  const resp = await fetch(path, {credentials: 'same-origin', cache: 'no-store'});
  let body = null;
  try { body = await resp.json(); } catch (e) { body = null; }
  if (!resp.ok) {
    throw new ApiError(resp.status, (body && body.error) || ('HTTP ' + resp.status));
  }
  return body;
}

async function act(path, body) {
  const headers = {'X-Sqlq-Csrf': '1'};
  const init = {method: 'POST', credentials: 'same-origin', headers};
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(path, init);
  let answer = null;
  try { answer = await resp.json(); } catch (e) { answer = null; }
  if (!resp.ok) throw new ApiError(resp.status, (answer && answer.error) || ('HTTP ' + resp.status));
  return answer;
}

function seg(s) { return encodeURIComponent(s); }

/* An action button.  A dangerous one asks for a second click within 4 s
** (no dialog: it also works where dialogs are blocked). */
function actionButton(label, action, opts) {
  opts = opts || {};
  if (server.read_only) return null;
  const b = el('button', {class: opts.danger ? 'danger' : null, 'data-action': opts.name,
                          'data-id': opts.id, title: opts.title});
  b.textContent = label;
  let armed = null;
  b.addEventListener('click', async () => {
    if (opts.danger && !armed) {
      b.textContent = 'sure? ' + label;
      b.classList.add('armed');
      armed = setTimeout(() => { armed = null; b.textContent = label; b.classList.remove('armed'); }, 4000);
      return;
    }
    clearTimeout(armed);
    b.disabled = true;
    try {
      const answer = await action();
      status(label + ': ' + JSON.stringify(answer));
    } catch (e) {
      status(label + ': ' + e.message, true);
    }
    refreshNow();
  });
  return b;
}

/* ---------------------------------------------------------------------
** Payloads: text as text, anything else as hex.
*/

function payloadNode(job) {
  if (typeof job.payload === 'string') {
    const p = job.payload;
    const shown = p.length > PAYLOAD_SHOWN ? p.slice(0, PAYLOAD_SHOWN) + '\u2026 (' + p.length + ' characters)' : p;
    return el('pre', {class: 'payload'}, shown);
  }
  if (typeof job.payload_base64 === 'string') {
    const raw = atob(job.payload_base64);
    const lines = [];
    for (let off = 0; off < raw.length && off < HEX_SHOWN; off += 16) {
      const chunk = raw.slice(off, off + 16);
      let hex = '', text = '';
      for (let i = 0; i < chunk.length; i++) {
        const c = chunk.charCodeAt(i);
        hex += c.toString(16).padStart(2, '0') + ' ';
        text += c >= 0x20 && c < 0x7f ? chunk[i] : '.';
      }
      lines.push(off.toString(16).padStart(6, '0') + '  ' + hex.padEnd(48) + ' ' + text);
    }
    if (raw.length > HEX_SHOWN) lines.push('\u2026 (' + raw.length + ' bytes)');
    return el('pre', {class: 'payload hex', title: 'not UTF-8: shown as hex'}, lines.join('\n'));
  }
  return el('span', {class: 'muted'}, '');
}

/* ---------------------------------------------------------------------
** The chart: finished and failed jobs per minute over the last hour, from
** GET /api/v1/queues/Q/history; hidden while that answers 404.
*/

function chart(minutes) {
  const W = 180, H = 32, n = 60;
  const now = Math.floor(Date.now() / 60000) * 60;
  const byT = new Map(minutes.map(m => [m.t, m]));
  let max = 1;
  for (const m of minutes) max = Math.max(max, (m.finished || 0) + (m.failed || 0) + (m.dead || 0));
  const svg = el('svg', {class: 'chart', width: W, height: H, viewBox: `0 0 ${W} ${H}`,
                         role: 'img', 'aria-label': 'finished and failed jobs per minute, last hour'});
  svg.append(el('line', {class: 'axis', x1: 0, y1: H - 0.5, x2: W, y2: H - 0.5}));
  const bw = W / n;
  let total = 0, bad = 0;
  for (let i = 0; i < n; i++) {
    const t = now - (n - 1 - i) * 60;
    const m = byT.get(t);
    if (!m) continue;
    const ok = m.finished || 0, failed = (m.failed || 0) + (m.dead || 0);
    total += ok; bad += failed;
    const hOk = ok / max * (H - 2), hBad = failed / max * (H - 2);
    const x = i * bw;
    if (ok > 0) svg.append(el('rect', {class: 'finished', x: x.toFixed(1), y: (H - 1 - hOk).toFixed(1), width: Math.max(bw - 0.5, 0.5).toFixed(1), height: hOk.toFixed(1)}));
    if (failed > 0) svg.append(el('rect', {class: 'failed', x: x.toFixed(1), y: (H - 1 - hOk - hBad).toFixed(1), width: Math.max(bw - 0.5, 0.5).toFixed(1), height: hBad.toFixed(1)}));
  }
  svg.append(el('title', {}, `last hour: ${total} finished, ${bad} failed or dead`));
  return svg;
}

async function loadHistory(queue, gen) {
  if (historyMissing) return null;
  const h = history.get(queue);
  if (h && Date.now() - h.at < HISTORY_MS) return h.minutes;
  try {
    const answer = await api('/api/v1/queues/' + seg(queue) + '/history');
    history.set(queue, {at: Date.now(), minutes: answer.minutes || []});
    return answer.minutes || [];
  } catch (e) {
    if (e.status === 404 && gen === generation) historyMissing = true;
    return null;
  }
}

/* ---------------------------------------------------------------------
** Pages.
*/

async function pageQueues(gen) {
  const answer = await api('/api/v1/queues');
  if (gen !== generation) return;
  const charts = await Promise.all(answer.queues.map(q => loadHistory(q.queue, gen)));
  if (gen !== generation) return;
  const headers = ['queue', {label: 'ready', num: 1}, {label: 'scheduled', num: 1},
                   {label: 'running', num: 1}, {label: 'dead', num: 1}, 'oldest ready'];
  if (!historyMissing) headers.push('last hour');
  if (!server.read_only) headers.push('');
  const rows = answer.queues.map((q, i) => el('tr', {class: q.paused ? 'paused' : null, 'data-queue': q.queue},
    el('td', {}, el('a', {href: '#/queue/' + seg(q.queue)}, q.queue)),
    el('td', {class: 'num'}, count(q, 'ready')),
    el('td', {class: 'num'}, count(q, 'scheduled')),
    el('td', {class: 'num'}, count(q, 'running')),
    el('td', {class: 'num dead' + (q.dead > 0 ? ' nonzero' : '')}, count(q, 'dead')),
    el('td', {}, age(q.oldest_ready_age)),
    historyMissing ? null : el('td', {}, charts[i] ? chart(charts[i]) : ''),
    server.read_only ? null : el('td', {}, pauseButton(q))));
  show(el('h1', {}, 'Queues ', el('span', {class: 'sub'}, answer.queues.length + ' known')),
       table(headers, rows, 'No queue has jobs yet.'),
       historyMissing ? null : el('p', {class: 'legend muted'}, 'Chart: jobs per minute, ',
         el('span', {class: 'finished'}, 'finished'), ' and ', el('span', {class: 'failed'}, 'failed or dead'), '.'));
  return REFRESH_MS;
}

function pauseButton(q) {
  const what = q.paused ? 'resume' : 'pause';
  return actionButton(what, () => act('/api/v1/queues/' + seg(q.queue) + '/' + what),
                      {name: what, id: q.queue});
}

async function pageQueue(gen, queue, params) {
  const state = params.get('state') || '';
  const search = params.get('search') || '';
  let query = '?limit=' + LIST_LIMIT + (state ? '&state=' + seg(state) : '');
  if (search) query += '&search=' + seg(search);
  const [q, list] = await Promise.all([
    api('/api/v1/queues/' + seg(queue)),
    api('/api/v1/queues/' + seg(queue) + '/jobs' + query)]);
  if (gen !== generation) return;
  const route = (s, t) => '#/queue/' + seg(queue) + '?' +
    new URLSearchParams(Object.entries({state: s, search: t}).filter(([, v]) => v)).toString();
  const select = el('select', {id: 'state', onchange: e => { location.hash = route(e.target.value, search); }},
    ['', 'ready', 'scheduled', 'waiting', 'running', 'dead', 'done'].map(s =>
      el('option', {value: s, selected: s === state}, s || 'unfinished and dead')));
  const input = el('input', {id: 'search', type: 'search', placeholder: 'job id or dedupe key', value: search});
  const form = el('form', {class: 'toolbar', onsubmit: e => { e.preventDefault(); location.hash = route(state, input.value.trim()); }},
    el('label', {}, 'state ', select), input, el('button', {type: 'submit'}, 'search'),
    search ? el('a', {href: route(state, '')}, 'clear') : null);
  const rows = list.jobs.map(j => el('tr', {'data-job': j.id},
    el('td', {class: 'num'}, j.id),
    el('td', {}, j.state),
    el('td', {class: 'num'}, j.priority),
    el('td', {class: 'num'}, j.attempts + '/' + j.max_attempts),
    el('td', {}, (j.run_at || j.finished_at || '').replace('T', ' ')),
    el('td', {}, j.dedupe_key || ''),
    el('td', {}, payloadNode(j)),
    el('td', {}, j.last_error ? el('span', {class: 'error-text'}, j.last_error) : ''),
    server.read_only ? null : el('td', {}, jobActions(queue, j))));
  const headers = [{label: 'id', num: 1}, 'state', {label: 'priority', num: 1}, {label: 'attempts', num: 1},
                   'run at / finished', 'dedupe key', 'payload', 'last error'];
  if (!server.read_only) headers.push('');
  show(el('h1', {}, queue, ' ', el('span', {class: 'sub'}, q.paused ? 'paused' : 'active')),
    el('div', {class: 'counts'},
      ['ready', 'scheduled', 'running', 'dead'].map(k =>
        el('div', {class: 'count', 'data-count': k}, el('b', {}, count(q, k)), el('span', {}, k))),
      el('div', {class: 'count'}, el('b', {}, age(q.oldest_ready_age) || '\u2013'), el('span', {}, 'oldest ready'))),
    server.read_only ? null : el('div', {class: 'toolbar'}, pauseButton(q),
      q.dead > 0 ? actionButton('retry all dead', () => act('/api/v1/queues/' + seg(queue) + '/retry-dead'),
                                {name: 'retry-dead', danger: true, id: queue}) : null),
    form,
    table(headers, rows, search ? 'No job among the ' + LIST_LIMIT + ' listed matches.' : 'No job in this state.'),
    list.jobs.length >= LIST_LIMIT ? el('p', {class: 'muted'}, 'The first ' + LIST_LIMIT + ' in claim order.') : null);
  return REFRESH_MS;
}

function jobActions(queue, j) {
  const base = '/api/v1/queues/' + seg(queue) + '/jobs/' + j.id;
  const out = [];
  if (j.state === 'dead' || j.state === 'scheduled') {
    out.push(actionButton(j.state === 'dead' ? 'retry' : 'run now', () => act(base + '/retry'), {name: 'retry', id: j.id}));
  }
  if (j.state === 'dead') {
    out.push(' ', actionButton('delete', () => act(base + '/delete'), {name: 'delete', id: j.id, danger: true}));
  }
  if (j.state === 'running' || j.state === 'ready') {
    out.push(actionButton('cancel', () => act('/api/v1/jobs/' + j.id + '/cancel'), {name: 'cancel', id: j.id, danger: true}));
  }
  return out;
}

async function pageSchedules(gen) {
  const answer = await api('/api/v1/schedules');
  if (gen !== generation) return;
  const rows = answer.schedules.map(s => el('tr', {},
    el('td', {}, s.name), el('td', {}, s.spec), el('td', {}, s.zone),
    el('td', {}, el('a', {href: '#/queue/' + seg(s.queue)}, s.queue)),
    el('td', {}, s.missed), el('td', {}, s.paused ? 'paused' : ''),
    el('td', {}, s.next || ''), el('td', {}, s.last || '')));
  show(el('h1', {}, 'Schedules'),
       table(['name', 'spec', 'zone', 'queue', 'missed', '', 'next', 'last'], rows, 'No schedule (sqlq cron add).'));
  return SLOW_REFRESH_MS;
}

async function pageLimits(gen) {
  const answer = await api('/api/v1/limits');
  if (gen !== generation) return;
  const rate = r => r ? r.max_starts + ' per ' + (r.period_us / 1e6) + 's' : '';
  const rows = answer.limits.map(l => el('tr', {},
    el('td', {}, el('a', {href: '#/queue/' + seg(l.queue)}, l.queue)),
    el('td', {class: 'num'}, l.concurrency === null ? '' : l.concurrency),
    el('td', {}, rate(l.rate)), el('td', {class: 'num'}, l.per_group), el('td', {}, l.fair ? 'yes' : '')));
  show(el('h1', {}, 'Limits'),
       table(['queue', {label: 'concurrency', num: 1}, 'rate', {label: 'per group', num: 1}, 'fair'], rows, 'No queue.'),
       el('p', {class: 'muted'}, 'Set with sqlq limit. Not refreshed by itself: reload to read again.'));
  return 0;
}

/* A lock's name as text: its name, its bytes in base64 when they are not
** UTF-8, or nothing when the backend keeps only its key. */
function lockName(l) {
  if (typeof l.name === 'string') return l.name;
  if (typeof l.name_base64 === 'string') return el('span', {class: 'muted'}, 'base64 ', l.name_base64);
  return el('span', {class: 'muted'}, 'unknown');
}

async function pageLocks(gen) {
  const answer = await api('/api/v1/locks?limit=' + LIST_LIMIT);
  if (gen !== generation) return;
  if (answer.unavailable) {
    show(el('h1', {}, 'Locks'), el('p', {class: 'empty'}, answer.unavailable));
    return 0;
  }
  const rows = answer.locks.map(l => el('tr', {},
    el('td', {}, lockName(l)), el('td', {class: 'num'}, l.key), el('td', {class: 'num'}, l.pid === null ? '' : l.pid),
    el('td', {}, l.holder || ''), el('td', {}, (l.since || '').replace('T', ' ')),
    el('td', {}, (l.expires || '').replace('T', ' ')), el('td', {class: 'num'}, l.fence === null ? '' : l.fence)));
  show(el('h1', {}, 'Locks'),
       table(['name', {label: 'key', num: 1}, {label: 'pid', num: 1}, 'holder', 'session since', 'lease expires',
              {label: 'fence', num: 1}], rows, 'No named lock is held.'),
       el('p', {class: 'muted'}, answer.more ? 'The first ' + LIST_LIMIT + ' locks. ' : '',
          'Where the backend keeps no name, a lock shows its key: sqlq locks NAME... names the keys of NAMEs.'));
  return SLOW_REFRESH_MS;
}

/* The list of rings or pools (kind 'ring' or 'pool') after params' after,
** each name a link to its page, with a link to the next page when more. */
async function pageNames(gen, kind, params) {
  const after = params.get('after') || '';
  const answer = await api('/api/v1/' + kind + 's?limit=' + LIST_LIMIT + (after ? '&after=' + seg(after) : ''));
  if (gen !== generation) return;
  const list = answer[kind + 's'];
  const link = o => el('a', {href: '#/' + kind + 's/' + seg(o.name)}, o.name);
  const rows = list.map(o => kind === 'ring'
    ? el('tr', {}, el('td', {}, link(o)), el('td', {class: 'num'}, num(o.capacity)), el('td', {class: 'num'}, num(o.entries)),
         el('td', {class: 'num'}, num(o.last_seq)), el('td', {}, (o.created_at || '').replace('T', ' ')))
    : el('tr', {}, el('td', {}, link(o)), el('td', {class: 'num'}, num(o.items)), el('td', {class: 'num'}, num(o.held)),
         el('td', {}, (o.last_used || 'never').replace('T', ' '))));
  const headers = kind === 'ring'
    ? ['ring', {label: 'capacity', num: 1}, {label: 'entries', num: 1}, {label: 'last seq', num: 1}, 'created']
    : ['pool', {label: 'items', num: 1}, {label: 'held', num: 1}, 'last used'];
  show(el('h1', {}, kind === 'ring' ? 'Rings' : 'Pools'), namedForm(kind, ''),
       table(headers, rows, after ? 'No ' + kind + ' after ' + after + '.' : 'No ' + kind + '.'),
       answer.more ? el('p', {}, el('a', {href: '#/' + kind + 's?after=' + seg(list[list.length - 1].name)}, 'more \u2192')) : null);
  return SLOW_REFRESH_MS;
}

function namedForm(kind, name) {
  const input = el('input', {id: kind + '-name', type: 'text', placeholder: kind + ' name', value: name || ''});
  return el('form', {class: 'toolbar', onsubmit: e => { e.preventDefault(); location.hash = '#/' + kind + 's/' + seg(input.value.trim()); }},
            input, el('button', {type: 'submit'}, 'show'));
}

async function pageRing(gen, name, params) {
  if (!name) return pageNames(gen, 'ring', params);
  const since = params.get('since') || '0';
  const answer = await api('/api/v1/rings/' + seg(name) + '?limit=' + LIST_LIMIT + '&since=' + seg(since));
  if (gen !== generation) return;
  const rows = answer.entries.map(e => el('tr', {},
    el('td', {class: 'num'}, e.seq), el('td', {}, (e.at || '').replace('T', ' ')), el('td', {}, payloadNode(e))));
  const last = answer.entries.length ? answer.entries[answer.entries.length - 1].seq : null;
  show(el('h1', {}, 'Ring ', name), namedForm('ring', name),
       table([{label: 'seq', num: 1}, 'pushed at', 'payload'], rows, 'No entry after ' + since + '.'),
       answer.entries.length >= LIST_LIMIT
         ? el('p', {}, el('a', {href: '#/rings/' + seg(name) + '?since=' + last}, 'newer entries \u2192')) : null);
  return SLOW_REFRESH_MS;
}

async function pagePool(gen, name, params) {
  if (!name) return pageNames(gen, 'pool', params);
  const answer = await api('/api/v1/pools/' + seg(name));
  if (gen !== generation) return;
  const rows = answer.items.map(i => el('tr', {},
    el('td', {}, i.item), el('td', {class: 'num'}, i.uses),
    el('td', {}, (i.last_used || 'never').replace('T', ' ')), el('td', {}, (i.held_until || '').replace('T', ' '))));
  show(el('h1', {}, 'Pool ', name), namedForm('pool', name),
       table(['item', {label: 'uses', num: 1}, 'last used', 'held until'], rows, 'No item.'));
  return SLOW_REFRESH_MS;
}

async function pageSubscriptions(gen) {
  const answer = await api('/api/v1/subscriptions');
  if (gen !== generation) return;
  const rows = answer.subscriptions.map(s => el('tr', {},
    el('td', {}, s.table), el('td', {}, el('a', {href: '#/queue/' + seg(s.tag)}, s.tag)),
    el('td', {}, s.on.join(', ')), el('td', {}, s.rows ? 'yes' : ''),
    el('td', {}, (s.created || '').replace('T', ' ')), el('td', {}, s.status)));
  show(el('h1', {}, 'Subscriptions'),
       table(['table', 'queue (tag)', 'on', 'rows', 'created', 'status'], rows, 'No subscription (sqlq subscribe).'));
  return SLOW_REFRESH_MS;
}

async function pageHealth(gen) {
  const answer = await api('/api/v1/health');
  if (gen !== generation) return;
  const rows = answer.health.map(h => el('tr', {},
    el('td', {}, h.name), el('td', {class: 'num'}, num(h.value) + ' ' + h.unit),
    el('td', {class: 'num'}, h.threshold ? num(h.threshold) : ''), el('td', {}, h.over ? 'over' : ''),
    el('td', {}, h.holder || ''), el('td', {}, (h.started_at || '').replace('T', ' ')), el('td', {}, h.detail || '')));
  show(el('h1', {}, 'Health'),
       table(['item', {label: 'value', num: 1}, {label: 'threshold', num: 1}, '', 'holder', 'since', 'detail'], rows, 'No item.'));
  return SLOW_REFRESH_MS;
}

/* ---------------------------------------------------------------------
** Routing and refreshing.
*/

function parseRoute() {
  const hash = location.hash.replace(/^#/, '') || '/';
  const q = hash.indexOf('?');
  const path = q >= 0 ? hash.slice(0, q) : hash;
  const params = new URLSearchParams(q >= 0 ? hash.slice(q + 1) : '');
  const parts = path.split('/').filter(Boolean).map(p => { try { return decodeURIComponent(p); } catch (e) { return p; } });
  return {parts, params};
}

function pageFor(parts, params) {
  switch (parts[0]) {
    case undefined: return ['queues', gen => pageQueues(gen)];
    case 'queue': return ['queues', gen => pageQueue(gen, parts[1] || '', params)];
    case 'schedules': return ['schedules', gen => pageSchedules(gen)];
    case 'limits': return ['limits', gen => pageLimits(gen)];
    case 'locks': return ['locks', gen => pageLocks(gen)];
    case 'rings': return ['rings', gen => pageRing(gen, parts[1], params)];
    case 'pools': return ['pools', gen => pagePool(gen, parts[1], params)];
    case 'subscriptions': return ['subscriptions', gen => pageSubscriptions(gen)];
    case 'health': return ['health', gen => pageHealth(gen)];
    default: return ['', async () => { show(el('h1', {}, 'No such page'), el('p', {}, el('a', {href: '#/'}, 'the queues'))); return 0; }];
  }
}

async function render(gen) {
  clearTimeout(timer);
  timer = null;
  const {parts, params} = parseRoute();
  const [nav, page] = pageFor(parts, params);
  for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('current', a.dataset.page === nav);
  let next = 0;
  try {
    next = await page(gen);
    if (gen !== generation) return;
    status('updated ' + new Date().toLocaleTimeString('en-GB') + (next ? ', every ' + next / 1000 + ' s' : ''));
    document.body.dataset.loaded = String(gen);
  } catch (e) {
    if (gen !== generation) return;
    status(e.message, true);
    document.body.dataset.loaded = String(gen);
    next = next || REFRESH_MS;
  }
  if (next && gen === generation) later(gen, next);
}

/* Refresh the page of route gen in ms, unless the tab is hidden then (it
** refreshes when shown again), or the reader is busy with it: typing in a
** field or with a button armed for its second click (then look again). */
function later(gen, ms) {
  timer = setTimeout(() => {
    const active = document.activeElement;
    if (document.hidden) {
      timer = null;
    } else if ((active && active.closest('main') && /^(INPUT|SELECT)$/.test(active.tagName)) ||
               document.querySelector('main button.armed')) {
      later(gen, 1000);
    } else {
      render(gen);
    }
  }, ms);
}

function route() {
  generation++;
  render(generation);
}

function refreshNow() { render(generation); }

document.addEventListener('visibilitychange', () => {
  if (!document.hidden && timer === null) refreshNow();
});
window.addEventListener('hashchange', route);

async function start() {
  try {
    server = await api('/api/v1/server');
    const s = document.getElementById('server');
    s.replaceChildren(server.backend + ' \u00b7 sqlq ' + server.version,
                      server.read_only ? el('span', {class: 'badge'}, 'read-only') : '');
  } catch (e) {
    status(e.message, true);
  }
  route();
}
start();
