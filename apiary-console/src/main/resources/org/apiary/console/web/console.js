// Apiary console pages. Data from /api/ is only ever inserted as text (textContent, text nodes, attribute values),
// never as markup. The API key the user gives is kept in this tab's sessionStorage and sent as a Bearer header.
'use strict';

(() => {
  const KEY = 'apiary.console.key';
  const SVG = 'http://www.w3.org/2000/svg';
  const OUTCOMES = [
    ['ok', 'ok', '✓'],
    ['failed', 'failed', '✗'],
    ['answered from record', 'recorded', '↺'],
    ['not reached', 'notreached', '–'],
  ];
  const outcomeClass = (o) => (OUTCOMES.find((x) => x[0] === o) || [o, 'unknown', '?'])[1];
  const outcomeGlyph = (o) => (OUTCOMES.find((x) => x[0] === o) || [o, 'unknown', '?'])[2];

  // --- building elements as text only ---

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') e.className = v;
      else e.setAttribute(k, String(v));
    }
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined) continue;
      e.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  function svg(tag, attrs, ...children) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== null && v !== undefined) e.setAttribute(k, String(v));
    }
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined) continue;
      e.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  const $ = (id) => document.getElementById(id);
  const params = () => new URLSearchParams(location.search);
  const text = (v) => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));

  function table(columns, rows, options) {
    const o = options || {};
    if (!rows.length) return el('p', { class: 'empty' }, o.empty || '(no rows)');
    return el('table', { id: o.id },
      el('thead', {}, el('tr', {}, columns.map((c) => el('th', { class: o.numeric && o.numeric.includes(c) ? 'num' : null }, c)))),
      el('tbody', {}, rows.map((r) => el('tr', {}, r.map((cell, i) => el('td', {
        class: o.numeric && o.numeric.includes(columns[i]) ? 'num' : null,
      }, cell instanceof Node ? cell : text(cell)))))));
  }

  const executionLink = (id) => (id ? el('a', { href: '/execution.html?id=' + encodeURIComponent(id) }, id) : '');
  const badge = (cls, label) => el('span', { class: 'badge ' + cls }, label);

  // --- the page chrome: one header for every page ---

  const NAV = [['/', 'executions', 'Executions'], ['/graphs.html', 'graphs', 'Graphs'], ['/record.html', 'record', 'Record'],
    ['/cluster.html', 'cluster', 'Cluster'], ['/sql.html', 'sql', 'SQL']];

  function header(page) {
    const current = page === 'execution' ? 'executions' : page;
    return el('header', {},
      el('a', { class: 'brand', href: '/' }, 'Apiary console'),
      el('nav', {}, NAV.map(([href, name, label]) => el('a', {
        href, 'data-nav': name, class: name === current ? 'current' : null,
        'aria-current': name === current ? 'page' : null }, label))),
      el('form', { id: 'key-form', autocomplete: 'off' },
        el('label', { for: 'key-input' }, 'API key'),
        el('input', { id: 'key-input', type: 'password', placeholder: 'admin key (kept in this tab only)', spellcheck: 'false' }),
        el('button', { type: 'submit', id: 'key-save' }, 'Use'),
        el('button', { type: 'button', id: 'key-forget' }, 'Forget')));
  }

  // --- the key and the API ---

  function setupKey() {
    const form = $('key-form');
    const input = $('key-input');
    const mark = () => form.classList.toggle('has-key', !!sessionStorage.getItem(KEY));
    mark();
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const k = input.value.trim();
      if (k) sessionStorage.setItem(KEY, k);
      input.value = '';
      mark();
      location.reload();
    });
    $('key-forget').addEventListener('click', () => {
      sessionStorage.removeItem(KEY);
      mark();
      location.reload();
    });
  }

  class ApiError extends Error {
    constructor(status, body) {
      super((body && body.error) || ('HTTP ' + status));
      this.status = status;
      this.body = body;
    }
  }

  async function api(path) {
    const headers = { Accept: 'application/json' };
    const k = sessionStorage.getItem(KEY);
    if (k) headers.Authorization = 'Bearer ' + k;
    const r = await fetch(path, { method: 'GET', headers, cache: 'no-store', credentials: 'omit' });
    let body = null;
    try {
      body = await r.json();
    } catch (e) {
      body = { error: 'the console answered ' + r.status + ' without JSON' };
    }
    if (!r.ok) throw new ApiError(r.status, body);
    return body;
  }

  function banner(messages, isError) {
    const b = $('banner');
    b.replaceChildren(...messages.map((m) => el('p', {}, m)));
    b.className = 'banner' + (isError ? ' error' : '');
    b.hidden = messages.length === 0;
  }

  function showProblems(body) {
    const problems = (body && body.problems) || [];
    if (problems.length) {
      banner(problems.map((p) => 'The ' + p.source + ' cannot answer: ' + p.message), false);
    }
  }

  function showError(e) {
    if (e instanceof ApiError && e.status === 401) {
      banner(['This console needs an API key with the admin role (or the role its operator named): enter it '
        + 'above; it is kept in this tab only. ' + e.message], true);
      $('key-input').focus();
    } else if (e instanceof ApiError) {
      banner([e.message], true);
    } else {
      banner(['The console cannot be reached: ' + e.message], true);
    }
  }

  // --- the DAG, drawn from the coordinates the server computed ---

  function truncate(s, n) {
    return s.length > n ? s.slice(0, n - 1) + '…' : s;
  }

  function dag(graph, withOutcomes) {
    const L = graph.layout;
    const w = L.nodeWidth;
    const h = L.nodeHeight;
    const byId = new Map(graph.nodes.map((n) => [n.id, n]));
    const arrowId = 'arrow-' + Math.random().toString(36).slice(2);
    const root = svg('svg', {
      class: 'dag', width: L.width, height: L.height, viewBox: '0 0 ' + L.width + ' ' + L.height,
      role: 'img', 'aria-label': 'graph ' + (graph.name || ''),
    });
    root.appendChild(svg('defs', {}, svg('marker', {
      id: arrowId, viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse',
    }, svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrow' }))));
    const labels = [];
    for (const e of graph.edges) {
      const a = byId.get(e.from);
      const b = byId.get(e.to);
      if (!a || !b) continue;
      const x1 = a.x + w;
      const y1 = a.y + h / 2;
      const x2 = b.x;
      const y2 = b.y + h / 2;
      const mx = (x1 + x2) / 2;
      root.appendChild(svg('path', {
        class: 'edge', d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`, 'marker-end': 'url(#' + arrowId + ')',
      }, svg('title', {}, e.from + ' → ' + e.to + ': ' + e.id + (e.type ? ' (' + e.type + ')' : ''))));
      labels.push(svg('text', { class: 'edge-label', x: mx, y: Math.min(y1, y2) - 6, 'text-anchor': 'middle' },
        truncate(e.id + (e.type ? ': ' + e.type.replace(/^class /, '').replace(/^java\.lang\./, '') : ''), 19)));
    }
    for (const n of graph.nodes) {
      const terminal = n.kind === 'source' || n.kind === 'sink';
      const cls = 'node' + (terminal ? ' terminal' : withOutcomes ? ' o-' + outcomeClass(n.outcome) : '');
      const g = svg('g', { class: cls, transform: `translate(${n.x},${n.y})`, 'data-node': n.id,
        'data-outcome': withOutcomes && !terminal ? n.outcome : null });
      g.appendChild(svg('rect', { width: w, height: h, rx: terminal ? 22 : 6 }));
      let sub;
      if (terminal) {
        sub = null;
      } else if (withOutcomes) {
        sub = n.outcome + (n.keys > 1 ? ' · ' + n.keys + ' keys' : '') + (n.recorded ? ' · R' : '');
      } else {
        sub = n.kind + (n.keyType ? ' · ' + n.keyType.replace(/^class /, '').replace(/^java\.lang\./, '') : '')
          + (n.recorded ? ' · R' : '');
      }
      const textX = withOutcomes && !terminal ? 26 : terminal ? w / 2 : 10;
      const anchor = terminal ? 'middle' : 'start';
      if (withOutcomes && !terminal) {
        g.appendChild(svg('text', { class: 'glyph', x: 8, y: h / 2 + 6 }, outcomeGlyph(n.outcome)));
      }
      g.appendChild(svg('text', { class: 'name', x: textX, y: sub ? 20 : h / 2 + 5, 'text-anchor': anchor },
        truncate(n.id, withOutcomes && !terminal ? 18 : 20)));
      if (sub) g.appendChild(svg('text', { class: 'sub', x: textX, y: 37 }, truncate(sub, 26)));
      g.appendChild(svg('title', {}, n.id + (sub ? ' — ' + sub : '') + (n.recorded ? ' (R: Algorithm 1 records its outputs)' : '')));
      root.appendChild(g);
    }
    labels.forEach((l) => root.appendChild(l)); // labels above edges and boxes
    return el('div', { class: 'dag-wrap' }, root);
  }

  function legend() {
    return el('div', { class: 'legend', id: 'legend' },
      OUTCOMES.map(([label, cls, glyph]) => el('span', {}, el('span', { class: 'swatch o-' + cls }), glyph + ' ' + label)),
      el('span', { class: 'hint' }, 'R: its outputs are recorded (Algorithm 1)'));
  }

  // --- pages ---

  const FILTERS = ['graph', 'status', 'since', 'caller', 'frontend', 'prefix'];

  async function executionsPage() {
    const p = params();
    const form = $('filters');
    for (const f of FILTERS) {
      if (p.get(f)) form.elements[f].value = p.get(f);
    }
    const q = new URLSearchParams();
    for (const f of FILTERS.concat(['after'])) {
      if (p.get(f)) q.set(f, p.get(f));
    }
    const body = await api('/api/executions' + (q.toString() ? '?' + q : ''));
    showProblems(body);
    const list = body.executions;
    const plural = (n) => n + ' matching execution' + (n === 1 ? '' : 's');
    // total is null where the sink was read too: the log and the sink are two databases, not counted together.
    $('summary').textContent = body.total !== null ? plural(body.total) + '; ' + list.length + ' on this page ('
      + body.pageSize + ' per page, newest first).'
      : body.next === null && !p.get('after') ? plural(list.length) + ', from the log and the provenance sink '
        + '(newest first).'
      : list.length + ' on this page, from the log and the provenance sink (not counted across pages; '
        + body.pageSize + ' per page, newest first).';
    $('content').replaceChildren(table(
      ['ID', 'Graph', 'Version', 'Status', 'Started', 'Duration (ms)', 'Caller', 'Frontend', 'Attempts'],
      list.map((e) => [executionLink(e.id), e.graph, e.version, badge('s-' + e.status, e.status), e.startedAt,
        e.durationMs, e.caller, e.frontend, e.attempts]),
      { id: 'executions', numeric: ['Version', 'Duration (ms)', 'Attempts'], empty: 'No execution matches these filters.' }));
    const next = $('next');
    if (body.next) {
      const n = new URLSearchParams(q);
      n.set('after', body.next);
      next.href = '/executions.html?' + n;
      next.hidden = false;
    }
  }

  async function executionPage() {
    const id = params().get('id');
    if (!id) {
      banner(['Give an execution: /execution.html?id=ID (the executions page links each one).'], true);
      return;
    }
    $('title').textContent = 'Execution ' + id;
    const body = await api('/api/executions/' + encodeURIComponent(id));
    showProblems(body);
    const e = body.execution;
    const content = $('content');
    const facts = [['ID', e.id], ['Graph', e.graph ? e.graph + ' version ' + e.version : null],
      ['Status', e.status ? badge('s-' + e.status, e.status) : null], ['Started', e.startedAt],
      ['Finished', e.finishedAt], ['Duration (ms)', e.durationMs], ['Caller', e.caller], ['Frontend', e.frontend],
      ['Attempts', e.attempts], ['Error', e.error]].filter((f) => f[1] !== null && f[1] !== undefined);
    content.appendChild(el('dl', { class: 'facts', id: 'facts' }, facts.map(([k, v]) => [el('dt', {}, k),
      el('dd', {}, v instanceof Node ? v : text(v))])));
    if (body.known) content.appendChild(el('p', { class: 'hint' }, 'Known ' + body.known + '.'));
    if (body.graph) {
      content.appendChild(el('h2', {}, 'Graph ' + body.graph.name + ', version ' + body.graph.version));
      content.appendChild(legend());
      content.appendChild(dag(body.graph, true));
    }
    if (body.timeline) {
      content.appendChild(el('h2', {}, 'Timeline'));
      content.appendChild(timeline(body.timeline));
    }
    content.appendChild(el('h2', {}, 'Function executions'));
    if (body.functions === null) {
      content.appendChild(el('p', { class: 'empty' }, 'Not known: this console reads no provenance sink, or it cannot be read now.'));
    } else {
      const outcomes = new Map(((body.graph && body.graph.nodes) || []).map((n) => [n.id, n.outcome]));
      const rows = body.functions.map((f) => [f.function, f.partitionKey, f.execId, f.latencyUs,
        f.mode === 'recorded' ? badge('o-recorded', '↺ answered from record') : badge('o-ok', '✓ ran'), '',
        touched(f.reads), touched(f.writes)]);
      const failed = [...outcomes].filter(([, o]) => o === 'failed').map(([n]) => n);
      for (const n of failed) {
        rows.push([n, '', '(rolled back)', '', badge('o-failed', '✗ failed'),
          body.outcome && body.outcome.message ? body.outcome.message : '', '', '']);
      }
      content.appendChild(table(['Function', 'Key', 'Transaction (exec ID)', 'Latency (µs)', 'Outcome', 'Error', 'Read', 'Wrote'],
        rows, { id: 'functions', numeric: ['Latency (µs)'], empty: 'No function execution of it is in the provenance sink.' }));
    }
    if (body.request) {
      content.appendChild(el('h2', {}, 'Request'));
      content.appendChild(el('pre', { id: 'request' }, JSON.stringify(body.request, null, 2)));
    }
    if (body.outcome) {
      content.appendChild(el('h2', {}, 'Outcome'));
      content.appendChild(el('pre', { id: 'outcome' }, JSON.stringify(body.outcome, null, 2)));
    }
  }

  const recordLink = (table, key) => el('a', { href: '/record.html?table=' + encodeURIComponent(table)
    + '&key=' + encodeURIComponent(key), class: 'record-link' }, table + ' ' + key);

  function touched(list) {
    if (!list || !list.length) return '';
    return el('ul', { class: 'touched' }, list.map((t) => el('li', {},
      t.keyed ? recordLink(t.table, t.key) : t.table + ' ' + t.key, t.event ? ' (' + t.event + ')' : '')));
  }

  // The timeline: one row per function execution, its bar from its transaction's start for its latency.
  function timeline(t) {
    const W = 1180;
    const label = 220;
    const row = 24;
    const plot = W - label - 90;
    const span = Math.max(t.spanUs, 1);
    const x = (us) => label + (us / span) * plot;
    const root = svg('svg', { class: 'timeline', id: 'timeline', width: W, height: t.bars.length * row + 30,
      viewBox: '0 0 ' + W + ' ' + (t.bars.length * row + 30), role: 'img', 'aria-label': 'timeline' });
    t.bars.forEach((b, i) => {
      const y = i * row + 4;
      const w = Math.max(3, (b.durationUs / span) * plot);
      const g = svg('g', { class: 'bar o-' + outcomeClass(b.outcome), 'data-function': b.function, 'data-outcome': b.outcome });
      g.appendChild(svg('text', { class: 'name', x: 0, y: y + 15 }, outcomeGlyph(b.outcome) + ' '
        + truncate(b.function + (b.key ? ' [' + b.key + ']' : ''), 28)));
      g.appendChild(svg('rect', { x: x(b.startUs), y, width: w, height: row - 8, rx: 3 }));
      g.appendChild(svg('text', { class: 'dur', x: x(b.startUs) + w + 6, y: y + 14 },
        b.outcome === 'failed' ? 'failed' : (b.durationUs / 1000).toFixed(2) + ' ms'));
      g.appendChild(svg('title', {}, b.function + ' — ' + b.outcome + ', from ' + (b.startUs / 1000).toFixed(2)
        + ' ms for ' + (b.durationUs / 1000).toFixed(2) + ' ms' + (b.error ? ': ' + b.error : '')));
      root.appendChild(g);
    });
    const axisY = t.bars.length * row + 8;
    root.appendChild(svg('line', { class: 'axis', x1: label, y1: axisY, x2: label + plot, y2: axisY }));
    root.appendChild(svg('text', { class: 'tick', x: label, y: axisY + 16 }, '0 ms'));
    root.appendChild(svg('text', { class: 'tick', x: label + plot, y: axisY + 16, 'text-anchor': 'end' },
      (t.spanUs / 1000).toFixed(2) + ' ms'));
    return el('div', { class: 'dag-wrap' }, root);
  }

  // A record's lineage, column by level: the record, its readers, what they wrote, ... drawn as SVG.
  function lineageGraph(body) {
    const colW = 200;
    const boxW = 176;
    const boxH = 34;
    const gap = 12;
    const levels = new Map();
    for (const n of body.nodes) {
      if (!levels.has(n.level)) levels.set(n.level, []);
      levels.get(n.level).push(n);
    }
    const pos = new Map();
    let height = 0;
    for (const [level, ns] of levels) {
      ns.forEach((n, i) => pos.set(n.id, { x: 10 + level * colW, y: 10 + i * (boxH + gap) }));
      height = Math.max(height, 10 + ns.length * (boxH + gap));
    }
    const cols = Math.max(...levels.keys()) + 1 + (body.more ? 1 : 0);
    const width = 20 + cols * colW;
    const root = svg('svg', { class: 'dag lineage', width, height: height + 10, viewBox: '0 0 ' + width + ' ' + (height + 10),
      role: 'img', 'aria-label': 'lineage' });
    const arrowId = 'arrow-lineage';
    root.appendChild(svg('defs', {}, svg('marker', { id: arrowId, viewBox: '0 0 10 10', refX: 10, refY: 5,
      markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' }, svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrow' }))));
    // Forward edges left to right between the boxes' sides; an edge back to an earlier column (an execution
    // writing a record it read, a record read by an earlier execution) as an arc below the boxes.
    const arcs = [];
    for (const e of body.edges) {
      const a = pos.get(e.from);
      const b = pos.get(e.to);
      if (!a || !b) continue;
      let d;
      if (b.x > a.x) {
        const x1 = a.x + boxW;
        const x2 = b.x;
        const y1 = a.y + boxH / 2;
        const y2 = b.y + boxH / 2;
        const mx = (x1 + x2) / 2;
        d = `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`;
      } else {
        const x1 = a.x + boxW / 2 - 12;
        const x2 = b.x + boxW / 2 + 12;
        const drop = 18 + 10 * arcs.length % 40;
        const low = Math.max(a.y, b.y) + boxH + drop;
        d = `M${x1},${a.y + boxH} C${x1},${low} ${x2},${low} ${x2},${b.y + boxH}`;
        arcs.push(low);
      }
      root.appendChild(svg('path', { class: 'edge' + (e.kind === 'read' ? '' : ' write'), 'data-kind': e.kind, d,
        'marker-end': 'url(#' + arrowId + ')' }, svg('title', {}, e.kind)));
    }
    const bottom = Math.max(height + 10, ...arcs.map((y) => y + 8));
    root.setAttribute('height', bottom);
    root.setAttribute('viewBox', '0 0 ' + width + ' ' + bottom);
    for (const n of body.nodes) {
      const p = pos.get(n.id);
      const label = n.kind === 'record' ? n.table + ' ' + n.key : n.execution;
      const href = n.kind === 'record' ? '/record.html?table=' + encodeURIComponent(n.table) + '&key=' + encodeURIComponent(n.key)
        : '/execution.html?id=' + encodeURIComponent(n.execution);
      const a = svg('a', { href, class: 'node lineage-' + n.kind + (n.level === 0 ? ' start' : ''), 'data-node': n.id,
        transform: `translate(${p.x},${p.y})` });
      a.appendChild(svg('rect', { width: boxW, height: boxH, rx: n.kind === 'record' ? 4 : 14 }));
      a.appendChild(svg('text', { class: 'sub', x: 10, y: 13 }, n.kind === 'record' ? 'record' : 'execution'));
      a.appendChild(svg('text', { class: 'name', x: 10, y: 28 }, truncate(label, 22)));
      a.appendChild(svg('title', {}, label));
      root.appendChild(a);
    }
    if (body.more) {
      const x = 10 + (cols - 1) * colW;
      root.appendChild(svg('g', { class: 'node more', id: 'lineage-more', transform: `translate(${x},10)` },
        svg('rect', { width: boxW, height: boxH, rx: 4 }),
        svg('text', { class: 'name', x: 10, y: 22 }, '… more (first ' + body.limit + ' shown)')));
    }
    return el('div', { class: 'dag-wrap', id: 'lineage' }, root);
  }

  function reportTable(report, id, empty) {
    const columns = report.columns;
    const execCol = columns.indexOf('execution_id');
    return table(columns, report.rows.map((r) => r.map((c, i) => (i === execCol && c !== 'NULL' ? executionLink(c) : c))),
      { id, empty: report.message || empty });
  }

  async function recordPage() {
    const p = params();
    const form = $('record-form');
    const tableName = p.get('table');
    const key = p.get('key');
    if (tableName) form.elements.table.value = tableName;
    if (key) form.elements.key.value = key;
    const content = $('content');
    if (!tableName || !key) {
      content.appendChild(el('p', { class: 'hint' }, 'Give an application table and a record key (column=value; '
        + 'several as a=1,b=2) to see its versions, who wrote each, who read it, and what its readers wrote.'));
      return;
    }
    $('title').textContent = 'Record ' + tableName + ' ' + key;
    const q = '?table=' + encodeURIComponent(tableName) + '&key=' + encodeURIComponent(key);
    const sections = [
      ['versions', 'Versions and their writers', 'versions', 'No versions: nothing wrote this record, or its writes were not captured.'],
      ['reads', 'Readers', 'readers', 'No execution read this record.'],
      ['downstream', 'Written by executions that read it (lineage, one step)', 'downstream', 'Its readers wrote nothing after reading it.'],
    ];
    for (const [query, heading, id, empty] of sections) {
      content.appendChild(el('h2', {}, heading));
      try {
        content.appendChild(reportTable(await api('/api/provenance/' + query + q), id, empty));
      } catch (e) {
        if (!(e instanceof ApiError) || e.status === 401) throw e;
        content.appendChild(el('p', { class: 'banner error', id: id + '-error' }, e.message));
      }
    }
    content.appendChild(el('h2', {}, 'Lineage: record → execution that read it → record it wrote, 3 steps'));
    try {
      const lineage = await api('/api/lineage' + q);
      content.appendChild(el('p', { class: 'hint', id: 'lineage-summary' }, lineage.nodes.length + ' nodes, '
        + lineage.edges.length + ' edges' + (lineage.more ? '; more than ' + lineage.limit + ' nodes: the rest are not shown' : '')
        + '. Records are square, executions round, each a link; grey arrows: read, orange: wrote (arcs below point back).'));
      content.appendChild(lineage.nodes.length > 1 ? lineageGraph(lineage)
        : el('p', { class: 'empty', id: 'lineage' }, 'No execution read this record.'));
    } catch (e) {
      if (!(e instanceof ApiError) || e.status === 401) throw e;
      content.appendChild(el('p', { class: 'banner error', id: 'lineage-error' }, e.message));
    }
  }

  async function graphsPage() {
    const body = await api('/api/graphs');
    showProblems(body);
    const content = $('content');
    if (!body.graphs.length) {
      content.appendChild(el('p', { class: 'empty' }, 'No graph is registered: deploy an application.'));
      return;
    }
    content.appendChild(el('p', { class: 'hint' }, 'Each graph\'s latest version, laid out left to right from SOURCE to '
      + 'SINK; edges are labelled with their IDs and value types. R: the function\'s outputs are recorded.'));
    for (const g of body.graphs) {
      const v = g.versions[g.versions.length - 1];
      const card = el('section', { class: 'graph-card', 'data-graph': g.name },
        el('h2', {}, g.name),
        el('div', { class: 'meta' }, 'version ' + v.version + ' of ' + g.versions.length + ', registered ' + v.registeredAt
          + ' · ' + v.kind + ' · ' + v.nodes.filter((n) => n.kind !== 'source' && n.kind !== 'sink').length + ' function(s)'));
      const h = g.lastHour;
      if (h) {
        const ms = (v) => (v === null || v === undefined ? '–' : v.toFixed(v < 10 ? 2 : 1) + ' ms');
        card.appendChild(el('div', { class: 'stats', 'data-stats': g.name },
          [['calls', h.calls], ['failures', h.failures], ['p50', ms(h.p50Ms)], ['p99', ms(h.p99Ms)]].map(([l, n]) =>
            el('span', { class: 'stat' + (l === 'failures' && h.failures > 0 ? ' bad' : '') }, el('b', {}, text(n)), ' ' + l)),
          el('span', { class: 'hint' }, ' in the last hour (logged executions)')));
      }
      card.appendChild(dag(Object.assign({ name: g.name }, v), false));
      content.appendChild(card);
    }
  }

  async function clusterPage() {
    const body = await api('/api/cluster');
    showProblems(body);
    const content = $('content');
    const d = body.database;
    content.appendChild(el('h2', {}, 'Database'));
    if (d) {
      content.appendChild(el('div', { class: 'cards', id: 'database' },
        [['VoltDB', d.version], ['hosts', d.hosts.length], ['partitions', d.partitions], ['k-factor', d.kfactor]]
          .map(([l, n]) => el('div', { class: 'card' }, el('div', { class: 'n' }, text(n)), el('div', { class: 'l' }, l)))));
      content.appendChild(table(['Host', 'Client address'], d.hosts.map((h, i) => [h, (d.addresses || [])[i]]), { id: 'hosts' }));
    } else {
      content.appendChild(el('p', { class: 'empty' }, 'The database cannot be read now (see above).'));
    }
    content.appendChild(el('h2', {}, 'Frontends'));
    content.appendChild(table(['Frontend', 'Endpoint', 'Lease', 'Remaining (s)', 'Running'],
      (body.frontends || []).map((f) => [f.id, f.endpoint, badge(f.live ? 's-DONE' : 's-FAILED', f.live ? 'live' : 'expired'),
        (f.leaseRemainingMs / 1000).toFixed(1), f.running]),
      { id: 'frontends', numeric: ['Remaining (s)', 'Running'], empty: 'No frontend holds or held a lease.' }));
    content.appendChild(el('h2', {}, 'Executions in the invocation log'));
    const counts = Object.entries(body.executions || {});
    content.appendChild(counts.length ? el('div', { class: 'cards', id: 'counts' }, counts.map(([s, n]) => el('a', {
      class: 'card', href: '/executions.html?status=' + encodeURIComponent(s) }, el('div', { class: 'n' }, text(n)),
    el('div', { class: 'l' }, s)))) : el('p', { class: 'empty' }, 'None within the retention.'));
    content.appendChild(el('h2', {}, 'Provenance sink'));
    content.appendChild(el('p', { id: 'sink' }, body.sink ? [body.sink.url, ' ', body.sink.reachable
      ? badge('s-DONE', 'reachable') : badge('s-FAILED', 'unreachable')] : 'None: this console reads no provenance.'));
    content.appendChild(el('h2', {}, 'Provenance backlog'));
    const p = body.provenance || {};
    const exp = Object.entries(p.exportBacklog || {});
    content.appendChild(el('p', { id: 'export-backlog' }, p.exportBacklog === null ? 'VoltDB\'s export streams: not known now.'
      : exp.length ? 'Captured writes waiting in VoltDB\'s export streams: ' + exp.map(([k, n]) => k + ' ' + n).join(', ') + '.'
        : 'No captured writes wait in VoltDB\'s export streams.'));
    if (p.servers === null || p.servers === undefined) {
      content.appendChild(el('p', { class: 'empty', id: 'backlog' }, 'Each server\'s spooler: not known to this console '
        + '(it reads the servers\' reports when it runs beside them, as in `apiary start`).'));
    } else {
      const known = (v, f) => (v === null || v === undefined ? '' : f(v));
      content.appendChild(table(['Server', 'Waiting', 'In memory', 'Spilled', 'Spill bytes', 'Oldest unloaded (s)', 'Loaded',
        'Dropped', 'Sink', 'Reported (s ago)', 'Last error'],
        p.servers.map((b) => [b.server + ' (pid ' + b.pid + ')' + (b.stopped ? ' — stopped' : ''), b.rowsWaiting, b.rowsInMemory,
          b.rowsOnDisk, known(b.spillBytes, (n) => n), known(b.oldestUnloadedSeconds, (n) => n.toFixed(1)), b.rowsLoaded,
          b.rowsDropped, known(b.sinkReachable, (r) => (r ? badge('s-DONE', 'reachable') : badge('s-FAILED', 'unreachable'))),
          b.reportAgeSeconds === null ? '' : b.reportAgeSeconds.toFixed(1),
          (b.refusing ? 'REFUSING WRITES: ' + b.refusing + ' ' : '') + (b.lastError || '')]),
        { id: 'backlog', numeric: ['Waiting', 'In memory', 'Spilled', 'Spill bytes', 'Oldest unloaded (s)', 'Loaded', 'Dropped',
          'Reported (s ago)'],
          empty: 'No server has reported (provenance is not captured, or the servers have just started).' }));
    }
  }

  const EXAMPLES = [
    'SELECT function_name, mode, COUNT(*) AS n FROM FunctionInvocations GROUP BY function_name, mode ORDER BY n DESC',
    'SELECT graph, status, COUNT(*) AS n FROM Invocations GROUP BY graph, status ORDER BY graph, status',
    'SELECT invocation_id, graph, error FROM Invocations WHERE status = \'FAILED\' ORDER BY finished_at DESC LIMIT 20',
  ];

  async function sqlPage() {
    const query = params().get('query');
    $('examples').replaceChildren(el('p', { class: 'hint' }, 'Examples:'), el('ul', {}, EXAMPLES.map((x) => el('li', {},
      el('a', { href: '/sql.html?query=' + encodeURIComponent(x), class: 'mono' }, x)))));
    if (!query) return;
    $('query').value = query;
    try {
      const body = await api('/api/sql?query=' + encodeURIComponent(query));
      $('content').replaceChildren(el('p', { class: 'summary', id: 'sql-summary' }, body.truncated ? body.message
        : body.rows.length + ' row' + (body.rows.length === 1 ? '' : 's')), reportTable(body, 'result', '(no rows)'));
    } catch (e) {
      if (e instanceof ApiError && e.status === 400) {
        banner(['The query was refused: ' + e.message], true);
      } else if (e instanceof ApiError && e.status === 504) {
        banner(['The query was stopped: ' + e.message], true);
      } else {
        throw e;
      }
    }
  }

  const PAGES = {
    executions: executionsPage, execution: executionPage, record: recordPage, graphs: graphsPage,
    cluster: clusterPage, sql: sqlPage,
  };

  document.addEventListener('DOMContentLoaded', () => {
    const page = document.body.dataset.page;
    document.body.prepend(header(page));
    setupKey();
    PAGES[page]().then(() => document.body.setAttribute('data-loaded', 'true'), (e) => {
      showError(e);
      document.body.setAttribute('data-loaded', 'error');
    });
  });
})();
