/*
 * The sluice console: one page on the admin listener, fed by its JSON (/v1/console/...,
 * /v1/bans, /v1/keys/...) and one event stream read with fetch, so that every call, the stream
 * too, carries the token as an Authorization header (EventSource cannot send headers, and a
 * token in a URL would reach logs). No cookies; the token lives in this tab's sessionStorage.
 * Every state change (lift, reset) needs the token; reads need it only when the operator gave
 * one (--admin-token-file), else the page opens at once and asks for the token at the first
 * action (the server generated it at first start, in the file /console/auth names).
 * Text from the server (keys are chosen by clients) only ever reaches the page as textContent.
 * Charts are SluiceCharts (charts.js), shared with the replay report.
 */
(function () {
  'use strict';

  var TOKEN = 'sluice.console.token';
  var ACTOR = 'sluice.console.actor';
  var OUTCOMES = ['allowed', 'refused', 'shadow_refused', 'degraded', 'delayed'];
  var WINDOW_1S = 15 * 60 * 1000;
  var TOP_RULES = 8;

  var state = {
    tokenRequired: false,
    actions: true,
    tokenFile: null,
    // the action a sign-in for it will run: a Lift or Reset clicked before the token was given
    pending: null,
    range: '1s',
    // rule -> outcome -> [[ms, value], ...]: the last 15 minutes, appended by each tick
    seconds: {},
    minutes: null,
    rules: [],
    selected: null,
    reloadSeq: -1,
    auditSeq: -1,
    policyLoadedAt: null,
    stream: null,
    streamGen: 0,
    charts: {}
  };

  function $(id) {
    return document.getElementById(id);
  }

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) {
      e.textContent = String(text);
    }
    if (cls) {
      e.className = cls;
    }
    return e;
  }

  function token() {
    return sessionStorage.getItem(TOKEN);
  }

  /** The name for the audit log, as the CLI sends it: printable ASCII, '_' for the rest. */
  function actor() {
    return (sessionStorage.getItem(ACTOR) || 'console').replace(/[^\x21-\x7e]/g, '_')
      .slice(0, 64);
  }

  function headers() {
    var h = {'Accept': 'application/json', 'X-Sluice-Actor': actor()};
    var t = token();
    if (t) {
      h.Authorization = 'Bearer ' + t;
    }
    return h;
  }

  function status(text) {
    $('status').textContent = text || '';
  }

  /**
   * A JSON call: {status, body}, status 0 when the server cannot be reached; a 401 sends the
   * page back to the sign-in form.
   */
  async function api(method, path) {
    var r;
    try {
      r = await fetch(path, {method: method, headers: headers(), cache: 'no-store',
        credentials: 'omit'});
    } catch (e) {
      status('Cannot reach the server: ' + e.message);
      return {status: 0, body: null};
    }
    var body = null;
    try {
      body = await r.json();
    } catch (e) {
      body = null;
    }
    if (r.status === 401 && state.tokenRequired) {
      signedOut('The server refused the token (401).');
    }
    return {status: r.status, body: body};
  }

  function segment(s) {
    // encodeURIComponent leaves !'()* alone; the admin API decodes any percent-encoding.
    return encodeURIComponent(s);
  }

  // ------------------------------------------------------------------ formatting

  function duration(ms) {
    if (ms === null || ms === undefined) {
      return '';
    }
    if (ms <= 0) {
      return '0s';
    }
    var s = Math.ceil(ms / 1000);
    if (s < 60) {
      return s + 's';
    }
    var m = Math.floor(s / 60);
    if (m < 60) {
      return m + 'm' + (s % 60 ? (s % 60) + 's' : '');
    }
    var h = Math.floor(m / 60);
    return h + 'h' + (m % 60 ? (m % 60) + 'm' : '');
  }

  function ago(ms) {
    return ms === null || ms === undefined ? '' : duration(ms) + ' ago';
  }

  function when(iso) {
    var d = new Date(iso);
    return isNaN(d.getTime()) ? String(iso) : d.toLocaleString();
  }

  function count(n) {
    return n === null || n === undefined ? '-' : Number(n).toLocaleString('en-US');
  }

  // ------------------------------------------------------------------ sign-in

  function show(signedIn) {
    $('sign-in').hidden = signedIn;
    $('main').hidden = !signedIn;
    showWho();
  }

  /** The header: who is signed in and the way out, or the way in when actions need it. */
  function showWho() {
    var has = !!token();
    var open = !$('main').hidden;
    $('sign-out').hidden = !(open && has);
    $('who').textContent = open && has ? actor() : '';
    $('sign-in-open').hidden = !(open && !has && !state.tokenRequired && state.actions);
  }

  /** Why the form asks for the token: to see anything, or to act. */
  function explainSignIn() {
    $('sign-in-why').textContent = state.tokenRequired
      ? 'This admin listener asks for its token: the text of the file given to '
        + '--admin-token-file.'
      : 'Lifting a ban and resetting a key need the admin token'
        + (state.tokenFile ? ': the text of ' + state.tokenFile + ' on the server (sluice '
          + 'serve wrote it there at its first start).' : '.');
  }

  /** The form, over the page when reads are open, to give the token an action needs. */
  function askForToken(message) {
    explainSignIn();
    $('sign-in').hidden = false;
    $('sign-in-error').textContent = message || '';
    $('sign-in-cancel').hidden = state.tokenRequired;
    $('sign-in').scrollIntoView();
    $('token').focus();
  }

  function signedOut(message) {
    sessionStorage.removeItem(TOKEN);
    if (!state.tokenRequired) {
      // reads are open: the page stays, only the actions need the token again
      showWho();
      status(message || '');
      return;
    }
    stopStream();
    show(false);
    explainSignIn();
    $('sign-in-error').textContent = message || '';
    $('live').textContent = 'offline';
    $('live').className = 'badge off';
    $('token').focus();
  }

  async function boot() {
    var auth = await (await fetch('/console/auth', {cache: 'no-store', credentials: 'omit'}))
      .json();
    state.tokenRequired = auth.token;
    state.actions = auth.actions !== false;
    state.tokenFile = auth.tokenFile || null;
    $('version').textContent = 'version ' + auth.version;
    $('actor').value = sessionStorage.getItem(ACTOR) || '';
    $('sign-in-form').addEventListener('submit', function (e) {
      e.preventDefault();
      var typed = $('token').value.trim();
      if (/[^\x21-\x7e]/.test(typed)) {
        // A header cannot carry it, and the server's tokens are printable ASCII.
        $('sign-in-error').textContent = 'A token is printable ASCII, without spaces.';
        return;
      }
      sessionStorage.setItem(TOKEN, typed);
      var name = $('actor').value.trim();
      if (name) {
        sessionStorage.setItem(ACTOR, name);
      } else {
        sessionStorage.removeItem(ACTOR);
      }
      $('token').value = '';
      $('sign-in-error').textContent = '';
      if (!state.tokenRequired) {
        $('sign-in').hidden = true;
        showWho();
        var pending = state.pending;
        state.pending = null;
        if (pending) {
          pending();
        }
        return;
      }
      enter().catch(function (err) {
        status('The console could not load: ' + err);
      });
    });
    $('sign-in-cancel').addEventListener('click', function () {
      state.pending = null;
      $('sign-in').hidden = true;
      $('sign-in-error').textContent = '';
    });
    $('sign-in-open').addEventListener('click', function () {
      askForToken('');
    });
    $('sign-out').addEventListener('click', function () {
      signedOut('Signed out.');
    });
    document.querySelectorAll('.range button').forEach(function (b) {
      b.addEventListener('click', function () {
        setRange(b.getAttribute('data-range'));
      });
    });
    $('rule-select').addEventListener('change', function () {
      state.selected = $('rule-select').value;
      drawCharts();
    });
    $('lookup').addEventListener('submit', function (e) {
      e.preventDefault();
      lookup($('lookup-rule').value, $('lookup-key').value.trim());
    });
    if (state.tokenRequired && !token()) {
      show(false);
      explainSignIn();
      $('sign-in-cancel').hidden = true;
      $('token').focus();
      return;
    }
    await enter();
  }

  async function enter() {
    var snap = await api('GET', '/v1/console/snapshot');
    if (snap.status !== 200) {
      if (snap.status !== 401) {
        status('The console could not load: HTTP ' + snap.status);
      }
      return;
    }
    show(true);
    renderSnapshot(snap.body);
    await loadHistory();
    refreshReloads();
    refreshAudit();
    startStream();
  }

  // ------------------------------------------------------------------ snapshot and policy

  function renderSnapshot(s) {
    state.rules = s.charted;
    fillRuleSelects(s.charted);
    renderPolicy(s.policy);
    state.policyLoadedAt = s.policy.loadedAt;
    renderLive(s.live);
  }

  function fillRuleSelects(rules) {
    ['rule-select', 'lookup-rule'].forEach(function (id) {
      var sel = $(id);
      var keep = sel.value;
      while (sel.firstChild) {
        sel.removeChild(sel.firstChild);
      }
      rules.forEach(function (r) {
        var o = el('option', r);
        o.value = r;
        sel.appendChild(o);
      });
      if (rules.indexOf(keep) >= 0) {
        sel.value = keep;
      }
    });
    if (!state.selected || rules.indexOf(state.selected) < 0) {
      state.selected = rules[0] || null;
    }
    $('rule-select').value = state.selected || '';
  }

  function renderPolicy(p) {
    $('policy-summary').textContent = p.source + ' (loaded ' + when(p.loadedAt) + '): '
      + p.summary;
    var tbody = $('rules').tBodies[0];
    clear(tbody);
    var rules = (p.effective && p.effective.rules) || {};
    Object.keys(rules).forEach(function (name) {
      var r = rules[name];
      var tr = el('tr');
      tr.appendChild(el('td', name));
      tr.appendChild(el('td', r.key, 'key'));
      tr.appendChild(el('td', r.mode + (p.dryRun ? ' (dry run)' : '')));
      tr.appendChild(el('td', (r.limits || []).map(limitText).join('; ')));
      tr.appendChild(el('td', r.ban || '-'));
      tr.appendChild(el('td', r.onStoreError));
      tbody.appendChild(tr);
    });
    var routes = $('routes').tBodies[0];
    clear(routes);
    ((p.effective && p.effective.routes) || []).forEach(function (r) {
      var tr = el('tr');
      tr.appendChild(el('td', r.name));
      tr.appendChild(el('td', (r.methods || []).join(', ') || 'any'));
      tr.appendChild(el('td', (r.paths || []).join(', ') || 'any', 'key'));
      tr.appendChild(el('td', (r.rules || []).join(', ')));
      tr.appendChild(el('td', r.exempt ? 'yes' : 'no'));
      routes.appendChild(tr);
    });
    $('policy-json').textContent = JSON.stringify(p.effective, null, 2);
  }

  function limitText(l) {
    var parts = [];
    Object.keys(l).forEach(function (k) {
      if (k !== 'type' && k !== 'name') {
        parts.push(k + ' ' + l[k]);
      }
    });
    return l.name + ': ' + l.type + (parts.length ? ' (' + parts.join(', ') + ')' : '');
  }

  function clear(node) {
    while (node.firstChild) {
      node.removeChild(node.firstChild);
    }
  }

  function emptyRow(tbody, columns, text) {
    var tr = el('tr', null, 'empty');
    var td = el('td', text);
    td.colSpan = columns;
    tr.appendChild(td);
    tbody.appendChild(tr);
  }

  // ------------------------------------------------------------------ live view

  function renderLive(live) {
    var sums = [0, 0, 0, 0, 0];
    var any = false;
    Object.keys(live.rates || {}).forEach(function (rule) {
      any = true;
      live.rates[rule].forEach(function (v, i) {
        sums[i] += v;
      });
    });
    if (any) {
      // Every rule a request evaluates decides it once: a request under two rules counts twice.
      $('now-decisions').textContent = count(sums[0] + sums[1] + sums[2] + sums[3]);
      $('now-refused').textContent = count(sums[1]);
      $('now-shadow').textContent = count(sums[2]);
      $('now-degraded').textContent = count(sums[3]);
    }
    $('now-keys').textContent = count(live.trackedKeys);
    $('now-bans').textContent = count((live.bans || []).length)
      + ((live.bans || []).length >= 50 ? '+' : '');
    renderStore(live.store, live.streams);
    renderRefused(live.refused || {});
    renderBans(live.bans || []);
    if (live.reloadSeq !== state.reloadSeq && state.reloadSeq !== -1) {
      refreshReloads();
    }
    if (live.auditSeq !== state.auditSeq && state.auditSeq !== -1) {
      refreshAudit();
    }
    if (state.policyLoadedAt && live.policyLoadedAt !== state.policyLoadedAt) {
      state.policyLoadedAt = live.policyLoadedAt;
      api('GET', '/v1/console/snapshot').then(function (s) {
        if (s.status === 200) {
          state.rules = s.body.charted;
          fillRuleSelects(s.body.charted);
          renderPolicy(s.body.policy);
        }
      });
    }
  }

  function renderStore(s, streams) {
    var dl = $('store');
    clear(dl);
    function row(k, v, cls) {
      dl.appendChild(el('dt', k));
      dl.appendChild(el('dd', v, cls));
    }
    row('store', s.store);
    row('ready', s.ready ? 'yes' : 'no', s.ready ? 'ok' : 'bad');
    row('connected', s.connected ? 'yes' : 'no', s.connected ? 'ok' : 'bad');
    row('circuit', s.circuit, s.circuit === 'closed' ? 'ok' : 'bad');
    row('last problem', s.problem || 'none');
    row('connect failures', count(s.connectFailures));
    row('circuit openings', count(s.circuitOpenings));
    row('store errors (degraded decisions)', count(s.storeErrors));
    if (streams) {
      row('console pages open', streams.open + ' of at most ' + streams.max
        + (streams.refused ? ' (' + count(streams.refused) + ' refused since start)' : ''));
    }
    var badge = $('store-badge');
    badge.textContent = 'store ' + s.store + ': ' + (!s.ready ? 'not ready'
      : !s.connected ? 'disconnected' : 'circuit ' + s.circuit);
    badge.className = 'badge' + (!s.ready || !s.connected || s.circuit === 'open' ? ' bad'
      : s.circuit === 'half_open' ? ' warn' : '');
  }

  function actions(td, rule, key, banned) {
    if (banned) {
      var lift = el('button', 'Lift', 'danger');
      lift.type = 'button';
      lift.title = 'Lift the ban and reset the key: its next request is decided afresh';
      lift.setAttribute('data-action', 'lift');
      lift.addEventListener('click', function () {
        act('DELETE', '/v1/bans/' + segment(rule) + '/' + segment(key), 'lifted the ban of',
          rule, key);
      });
      td.appendChild(lift);
    }
    var reset = el('button', 'Reset');
    reset.type = 'button';
    reset.title = 'Forget the key\u2019s state: a full limit and no ban';
    reset.setAttribute('data-action', 'reset');
    reset.addEventListener('click', function () {
      act('POST', '/v1/keys/' + segment(rule) + '/' + segment(key) + '/reset', 'reset', rule,
        key);
    });
    td.appendChild(reset);
  }

  /**
   * Makes {@code tbody}'s rows the {@code items}, in order, reusing the row of an item already
   * shown (same rule and key): its cells' text is updated in place and its buttons stay the same
   * elements, so a click that lands while the tick redraws still reaches its button.
   */
  function syncRows(tbody, items, cells, withBan, columns, emptyText) {
    var existing = {};
    Array.prototype.slice.call(tbody.rows).forEach(function (tr) {
      var id = tr.getAttribute('data-id');
      if (id === null) {
        tbody.removeChild(tr);
      } else {
        existing[id] = tr;
      }
    });
    var seen = {};
    items.forEach(function (item) {
      var id = item.rule + '\n' + item.key;
      seen[id] = true;
      var texts = cells(item);
      var banned = String(withBan(item));
      var tr = existing[id];
      if (!tr) {
        tr = el('tr');
        tr.setAttribute('data-id', id);
        tr.setAttribute('data-rule', item.rule);
        tr.setAttribute('data-key', item.key);
        texts.forEach(function (c) {
          tr.appendChild(el('td', c[0], c[1]));
        });
        tr.appendChild(el('td'));
      } else {
        texts.forEach(function (c, j) {
          if (tr.cells[j].textContent !== String(c[0])) {
            tr.cells[j].textContent = String(c[0]);
          }
        });
      }
      if (tr.getAttribute('data-banned') !== banned) {
        tr.setAttribute('data-banned', banned);
        var td = tr.cells[texts.length];
        clear(td);
        actions(td, item.rule, item.key, banned === 'true');
      }
      tbody.appendChild(tr);   // in order; an existing row moves, it is not re-created
    });
    Object.keys(existing).forEach(function (id) {
      if (!seen[id]) {
        tbody.removeChild(existing[id]);
      }
    });
    if (!items.length) {
      emptyRow(tbody, columns, emptyText);
    }
  }

  function renderRefused(byRule) {
    var summary = [];
    var items = [];
    Object.keys(byRule).forEach(function (rule) {
      var r = byRule[rule];
      if (r.count > 0) {
        summary.push(rule + ': ' + r.count + (r.count >= 10 ? '+' : '') + ' refusing');
      }
      r.keys.forEach(function (k) {
        items.push(k);
      });
    });
    syncRows($('refused').tBodies[0], items, function (k) {
      var retry = 0;
      k.limits.forEach(function (l) {
        retry = Math.max(retry, l.retryAfterMs);
      });
      return [[k.rule], [k.key, 'key'], [k.refusedBy || ''], [k.limits.map(function (l) {
        return l.name + ' ' + l.remaining;
      }).join(', '), 'num'], [k.banned ? duration(k.banLeftMs) : duration(retry), 'num'],
        [k.banned ? duration(k.banLeftMs) : '-', 'num'], [ago(k.refusedAgoMs), 'num']];
    }, function (k) {
      return k.banned;
    }, 8, 'none');
    $('refused-summary').textContent = summary.length ? summary.join(' \u00b7 ')
      : 'No key is refusing now.';
  }

  function renderBans(bans) {
    syncRows($('bans').tBodies[0], bans, function (k) {
      return [[k.rule], [k.key, 'key'], [duration(k.banLeftMs), 'num'],
        [ago(k.refusedAgoMs), 'num']];
    }, function () {
      return true;
    }, 5, 'no active bans');
  }

  async function act(method, path, verb, rule, key) {
    if (!state.actions) {
      status('This server has no admin token, so it takes no actions: give sluice serve '
        + '--admin-token-file.');
      return;
    }
    var again = function () {
      return act(method, path, verb, rule, key);
    };
    if (!token()) {
      state.pending = again;
      askForToken('');
      return;
    }
    var r = await api(method, path);
    if (r.status === 401 && !state.tokenRequired) {
      sessionStorage.removeItem(TOKEN);
      showWho();
      state.pending = again;
      askForToken('The server refused the token (401).');
      return;
    }
    if (r.status === 200) {
      status(verb + ' ' + key + ' under ' + rule + '.');
      // the rows go at the next tick; drop them now so a second click cannot repeat the action
      document.querySelectorAll('tr[data-rule]').forEach(function (tr) {
        if (tr.getAttribute('data-rule') === rule && tr.getAttribute('data-key') === key
          && method === 'DELETE') {
          tr.parentNode.removeChild(tr);
        }
      });
    } else if (r.status !== 401) {
      status((r.body && r.body.error ? r.body.error : 'HTTP ' + r.status) + ' (' + key
        + ' under ' + rule + ')');
    }
    refreshAudit();
  }

  async function lookup(rule, key) {
    var out = $('lookup-result');
    clear(out);
    if (!rule || !key) {
      return;
    }
    var r = await api('GET', '/v1/keys/' + segment(rule) + '/' + segment(key));
    if (r.status !== 200) {
      if (r.status !== 401) {
        out.appendChild(el('p', (r.body && r.body.error ? r.body.error : 'HTTP ' + r.status)
          + (r.body && r.body.expected ? ' (expected: ' + r.body.expected + ')' : ''),
          'error'));
      }
      return;
    }
    var k = r.body;
    var dl = el('dl');
    function row(a, b) {
      dl.appendChild(el('dt', a));
      dl.appendChild(el('dd', b));
    }
    row('key', k.key + ' under ' + k.rule);
    row('state', !k.present ? 'no state held: decided as a fresh key'
      : k.banned ? 'banned for ' + duration(k.banLeftMs)
      : k.refusing ? 'refusing' : 'allowed');
    k.limits.forEach(function (l) {
      row('limit ' + l.name, l.remaining + ' left, full in ' + duration(l.resetMs)
        + (l.retryAfterMs > 0 ? ', next call in ' + duration(l.retryAfterMs) : ''));
    });
    out.appendChild(dl);
    var td = el('div', null, 'row');
    actions(td, k.rule, k.key, k.banned);
    out.appendChild(td);
  }

  async function refreshReloads() {
    var r = await api('GET', '/v1/console/reloads');
    if (r.status !== 200) {
      return;
    }
    var tbody = $('reloads').tBodies[0];
    clear(tbody);
    r.body.reloads.forEach(function (e) {
      state.reloadSeq = Math.max(state.reloadSeq, e.seq);
      var tr = el('tr');
      tr.setAttribute('data-result', e.result);
      tr.appendChild(el('td', when(e.at)));
      tr.appendChild(el('td', e.cause));
      tr.appendChild(el('td', e.result, e.result === 'rejected' ? 'bad' : 'ok'));
      var detail = el('td');
      if (e.summary) {
        detail.appendChild(el('div', e.summary));
      }
      (e.errors || []).forEach(function (x) {
        detail.appendChild(el('div', x, 'error'));
      });
      if (e.errorCount > (e.errors || []).length) {
        detail.appendChild(el('div', '... ' + (e.errorCount - e.errors.length)
          + ' more in the log'));
      }
      tr.appendChild(detail);
      tbody.appendChild(tr);
    });
    if (state.reloadSeq < 0) {
      state.reloadSeq = 0;
    }
  }

  async function refreshAudit() {
    var r = await api('GET', '/v1/console/audit');
    if (r.status !== 200) {
      return;
    }
    var tbody = $('audit').tBodies[0];
    clear(tbody);
    state.auditSeq = Math.max(state.auditSeq, 0);
    r.body.audit.forEach(function (e) {
      state.auditSeq = Math.max(state.auditSeq, e.seq);
      var tr = el('tr');
      tr.setAttribute('data-action', e.action);
      tr.appendChild(el('td', when(e.at)));
      tr.appendChild(el('td', e.action));
      tr.appendChild(el('td', e.rule));
      tr.appendChild(el('td', e.key, 'key'));
      tr.appendChild(el('td', e.outcome + ' (' + e.status + ')',
        e.status === 200 ? 'ok' : 'bad'));
      tr.appendChild(el('td', e.actor + ' (' + e.auth + ', ' + e.peer + ')'));
      tbody.appendChild(tr);
    });
    if (!tbody.rows.length) {
      emptyRow(tbody, 6, 'no admin actions since the server started');
    }
  }

  // ------------------------------------------------------------------ charts

  async function loadHistory() {
    var r = await api('GET', '/v1/console/history?resolution=1s');
    if (r.status !== 200) {
      return;
    }
    state.seconds = toPoints(r.body);
    drawCharts();
  }

  async function loadMinutes() {
    var r = await api('GET', '/v1/console/history?resolution=1m');
    if (r.status === 200) {
      state.minutes = toPoints(r.body);
      drawCharts();
    }
  }

  /** The server's rings (start, stepMs, one array per outcome) as chart points. */
  function toPoints(h) {
    var out = {};
    Object.keys(h.rules).forEach(function (rule) {
      out[rule] = {};
      h.outcomes.forEach(function (o) {
        out[rule][o] = h.rules[rule][o].map(function (v, i) {
          return [h.start + i * h.stepMs, v];
        });
      });
    });
    return out;
  }

  function setRange(range) {
    state.range = range;
    document.querySelectorAll('.range button').forEach(function (b) {
      b.setAttribute('aria-pressed', String(b.getAttribute('data-range') === range));
    });
    if (range === '1m') {
      loadMinutes();
    } else {
      drawCharts();
    }
  }

  function appendTick(t, rates) {
    var from = t - WINDOW_1S;
    Object.keys(rates).forEach(function (rule) {
      if (!state.seconds[rule]) {
        // A rule that first counts after the history loaded had nothing before: a zero just
        // before its first second, or the line would ramp from the window's start.
        var before = Math.floor(t / 1000) * 1000 - 1000;
        state.seconds[rule] = {};
        OUTCOMES.forEach(function (o) {
          state.seconds[rule][o] = [[before, 0]];
        });
      }
      OUTCOMES.forEach(function (o, i) {
        var points = state.seconds[rule][o];
        var at = Math.floor(t / 1000) * 1000;
        if (points.length && points[points.length - 1][0] === at) {
          points[points.length - 1][1] += rates[rule][i];
        } else {
          points.push([at, rates[rule][i]]);
        }
      });
    });
    Object.keys(state.seconds).forEach(function (rule) {
      OUTCOMES.forEach(function (o) {
        var points = state.seconds[rule][o];
        while (points.length && points[0][0] < from) {
          points.shift();
        }
      });
    });
  }

  function total(points) {
    var s = 0;
    for (var i = 0; i < points.length; i++) {
      s += points[i][1];
    }
    return s;
  }

  /**
   * The series, with a zero at the start of the window: the x axis then spans all of it (a rule
   * the server has no counts for had none), not only the seconds since the page opened.
   */
  function padded(series, span) {
    var start = Date.now() - span;
    start -= start % 1000;
    if (series.length) {
      series[0] = {name: series[0].name, points: [[start, 0]].concat(series[0].points.filter(
        function (p) {
          return p[0] > start;
        }))};
    }
    return series;
  }

  function drawCharts() {
    var minutes = state.range === '1m' && state.minutes;
    var data = minutes ? state.minutes : state.seconds;
    var unit = minutes ? 'per minute' : 'per second';
    var span = minutes ? 24 * 3600 * 1000 : WINDOW_1S;
    // The refusal chart: the rules that refused most in the window, enforced and shadow.
    var candidates = [];
    Object.keys(data).forEach(function (rule) {
      var refused = data[rule].refused || [];
      var shadow = data[rule].shadow_refused || [];
      if (total(refused) > 0) {
        candidates.push({name: rule, points: refused, sum: total(refused)});
      }
      if (total(shadow) > 0) {
        candidates.push({name: rule + ' (shadow)', points: shadow, sum: total(shadow)});
      }
    });
    candidates.sort(function (a, b) {
      return b.sum - a.sum;
    });
    var series = candidates.slice(0, TOP_RULES).map(function (c) {
      return {name: c.name, points: c.points};
    });
    var refusals = {series: padded(series, span), yLabel: 'refused ' + unit, stacked: false,
      title: 'Refusals ' + unit + ' by rule'};
    if (!state.charts.refusals) {
      state.charts.refusals = SluiceCharts.timeSeries($('chart-refusals'), refusals);
    } else {
      state.charts.refusals.update(refusals);
    }
    var rule = state.selected;
    var perRule = {series: padded(OUTCOMES.map(function (o) {
      return {name: o.replace('_', ' '), points: rule && data[rule] ? data[rule][o] : []};
    }), span), yLabel: 'decisions ' + unit, stacked: false,
      title: 'Decisions ' + unit + ' of ' + (rule || 'no rule')};
    if (!state.charts.rule) {
      state.charts.rule = SluiceCharts.timeSeries($('chart-rule'), perRule);
    } else {
      state.charts.rule.update(perRule);
    }
  }

  // ------------------------------------------------------------------ the event stream

  function stopStream() {
    state.streamGen++;
    if (state.stream) {
      state.stream.abort();
      state.stream = null;
    }
  }

  async function startStream() {
    stopStream();
    var gen = state.streamGen;
    var ctl = new AbortController();
    state.stream = ctl;
    var retry = 2000;
    try {
      var r = await fetch('/v1/console/events', {headers: headers(), cache: 'no-store',
        credentials: 'omit', signal: ctl.signal});
      if (r.status === 401) {
        signedOut('The server refused the token (401).');
        return;
      }
      if (r.status === 503) {
        retry = 10000;
        setLive('too many pages open', 'bad');
        status('The server has as many console pages open as it serves (503); retrying in '
          + '10 s.');
      } else if (r.ok) {
        setLive('live', '');
        status('');
        await read(r.body.getReader(), gen);
      }
    } catch (e) {
      if (gen !== state.streamGen) {
        return;   // stopped on purpose
      }
    }
    if (gen !== state.streamGen) {
      return;
    }
    setLive('reconnecting', 'warn');
    setTimeout(function () {
      if (gen === state.streamGen) {
        loadHistory().then(startStream);
      }
    }, retry);
  }

  function setLive(text, cls) {
    $('live').textContent = text;
    $('live').className = 'badge' + (cls ? ' ' + cls : '');
  }

  /**
   * Sends a nonce of the stream back: the server closes a stream whose page proves for 30 s
   * that it does not read it (a tab gone to sleep, a client that only holds the connection).
   */
  function ack(stream, nonce) {
    if (!stream) {
      return;
    }
    fetch('/v1/console/ack?stream=' + encodeURIComponent(stream) + '&nonce='
      + encodeURIComponent(nonce), {headers: headers(), cache: 'no-store', credentials: 'omit'})
      .catch(function () {
        // the stream ends anyway if the server never hears back; the page reconnects
      });
  }

  /**
   * Reads server-sent events until the end: "event: stream" (this stream's id), "event: ack" (a
   * nonce to send back), "event: tick" (the live view).
   */
  async function read(reader, gen) {
    var decoder = new TextDecoder();
    var buffer = '';
    var stream = null;
    for (;;) {
      var chunk = await reader.read();
      if (chunk.done || gen !== state.streamGen) {
        return;
      }
      buffer += decoder.decode(chunk.value, {stream: true});
      var end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        var block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        var data = '';
        var name = 'message';
        block.split('\n').forEach(function (line) {
          if (line.indexOf('data:') === 0) {
            data += line.slice(5).trim();
          } else if (line.indexOf('event:') === 0) {
            name = line.slice(6).trim();
          }
        });
        if (name === 'stream') {
          stream = data;
        } else if (name === 'ack') {
          ack(stream, data);
        } else if (data) {
          onTick(JSON.parse(data));
        }
      }
    }
  }

  function onTick(live) {
    appendTick(live.t, live.rates || {});
    if (state.range === '1s') {
      drawCharts();
    } else if (Math.floor(live.t / 1000) % 60 === 0) {
      loadMinutes();
    }
    renderLive(live);
  }

  document.addEventListener('DOMContentLoaded', function () {
    boot().catch(function (e) {
      status('The console could not start: ' + e);
    });
  });
}());
