/* The replay report: built from the document in #replay-data with SluiceCharts (charts.js). */
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('replay-data').textContent);
  var main = document.getElementById('report');

  function el(name, attrs, parent, text) {
    var e = document.createElement(name);
    for (var k in attrs || {}) {
      if (Object.prototype.hasOwnProperty.call(attrs, k)) {
        e.setAttribute(k, attrs[k]);
      }
    }
    if (text !== undefined && text !== null) {
      e.textContent = String(text);
    }
    if (parent) {
      parent.appendChild(e);
    }
    return e;
  }

  function n(v) {
    return v === null || v === undefined ? '-' : Number(v).toLocaleString('en-US');
  }

  function table(parent, heads, rows, numeric) {
    var t = el('table', null, parent);
    var tr = el('tr', null, el('thead', null, t));
    heads.forEach(function (h, i) {
      el('th', numeric && numeric[i] ? {'class': 'num'} : null, tr, h);
    });
    var body = el('tbody', null, t);
    rows.forEach(function (row) {
      var r = el('tr', null, body);
      row.forEach(function (c, i) {
        var td = el('td', numeric && numeric[i] ? {'class': 'num'} : null, r);
        if (c && c.nodeType) {
          td.appendChild(c);
        } else {
          td.textContent = c === null || c === undefined ? '-' : String(c);
        }
      });
    });
    return t;
  }

  function figure(parent, value, label) {
    var f = el('div', {'class': 'figure'}, parent);
    el('b', null, f, value);
    el('span', null, f, label);
  }

  function points(start, seconds, values) {
    return values.map(function (v, i) {
      return [start + i * seconds * 1000, v];
    });
  }

  /** A timeline that starts and ends at zero, so series of other spans do not join up. */
  function padded(start, seconds, values) {
    var p = points(start, seconds, values);
    p.unshift([start - seconds * 1000, 0]);
    p.push([start + values.length * seconds * 1000, 0]);
    return p;
  }

  function overview(p, name, key) {
    var s = el('section', {id: 'overview-' + key}, main);
    el('h2', null, s, 'Policy ' + name);
    var f = el('div', {'class': 'figures'}, s);
    figure(f, n(p.allowed), 'allowed');
    figure(f, n(p.refused), 'refused');
    figure(f, n(p.shadowRefused), 'shadow-refused');
    figure(f, n(p.exempt + p.allowlisted), 'exempt or allow-listed');
    figure(f, n(p.noRule), 'under no rule');
    figure(f, n(p.refusedClients), 'clients refused');
    table(s, ['rule', 'mode', 'limit', 'requests', 'refused', 'shadow-refused', 'clients',
      'clients above the limit', 'first refusal', 'suggested'],
      p.rules.map(function (r) {
        return [r.name, r.mode, r.limit ? r.limit.text : '-', n(r.requests), n(r.refused),
          n(r.shadowRefused), n(r.clients), n(r.clientsAboveLimit),
          r.firstRefusal ? r.firstRefusal.time + ' ' + r.firstRefusal.client
            : (r.firstShadowRefusal ? r.firstShadowRefusal + ' (shadow)' : '-'),
          r.suggestion ? r.suggestion.text + ' (' + n(r.suggestion.clientsAbove) + ' above)'
            : '-'];
      }), [false, false, false, true, true, true, true, true, false, false]);
    return s;
  }

  function rules(p, name, key) {
    p.rules.forEach(function (r) {
      if (!r.requests) {
        return;
      }
      var s = el('section', {'class': 'rule', id: 'rule-' + key + '-' + r.name}, main);
      el('h2', null, s, 'Rule ' + r.name + (r.limit ? ': ' + r.limit.text : '') + ' (' + r.mode
        + ', policy ' + name + ')');
      var pair = el('div', {'class': 'pair'}, s);
      var left = el('div', null, pair);
      el('h3', null, left, 'Requests and refusals over time');
      var ser = p.series.rules[r.name];
      var sec = p.series.bucketSeconds;
      SluiceCharts.timeSeries(el('div', {'class': 'chart'}, left), {utc: true,
        yLabel: 'per ' + sec + ' s', title: r.name + ': requests and refusals per '
          + sec + ' s',
        series: [{name: 'requests', points: points(p.series.start, sec, ser.requests)},
          {name: 'refused', points: points(p.series.start, sec, ser.refused)},
          {name: 'shadow-refused', points: points(p.series.start, sec, ser.shadowRefused)}]});
      var right = el('div', null, pair);
      el('h3', null, right, 'Clients by their peak within the rule\'s window');
      var marker = r.limit ? {value: r.limit.capacity + 1, label: 'limit ' + r.limit.capacity
        + ': ' + n(r.clientsAboveLimit) + ' of ' + n(r.clients) + ' above'} : null;
      var markers = marker ? [marker] : [];
      if (r.suggestion && r.limit && r.suggestion.capacity !== r.limit.capacity) {
        markers.push({value: r.suggestion.capacity + 1, label: 'suggested '
          + r.suggestion.capacity});
      }
      SluiceCharts.histogram(el('div', {'class': 'chart'}, right), {logX: true, logY: true,
        xLabel: 'peak requests per ' + (r.limit ? r.limit.windowSeconds + ' s' : 'window'),
        yLabel: 'clients', title: r.name + ': clients by peak requests within its window',
        bins: r.peaks, markers: markers});
    });
  }

  function refused(p, name, key) {
    var s = el('section', {id: 'refused-' + key}, main);
    el('h2', null, s, 'Top refused clients (policy ' + name + ')');
    if (!p.topRefused.length) {
      el('p', null, s, 'No client was refused.');
      return;
    }
    var pair = el('div', {'class': 'pair'}, s);
    var left = el('div', null, pair);
    el('h3', null, left, 'Refusals');
    SluiceCharts.bars(el('div', {'class': 'chart'}, left), {xLabel: 'refused requests',
      title: 'Refusals of the most refused clients',
      items: p.topRefused.slice(0, 10).map(function (c) {
        return {label: c.client, value: c.refused + c.shadowRefused};
      })});
    var right = el('div', null, pair);
    el('h3', null, right, 'Their refusals over time, from their first refusal');
    SluiceCharts.timeSeries(el('div', {'class': 'chart'}, right), {utc: true,
      yLabel: 'refused', title: 'Refusals over time of the five most refused clients',
      series: p.topRefused.slice(0, 5).map(function (c) {
        return {name: c.client, points: padded(c.timeline.start, c.timeline.bucketSeconds,
          c.timeline.refused)};
      })});
    table(s, ['client', 'refused', 'shadow', 'requests', 'peak', 'when', 'first refusal',
      'user agents'], p.topRefused.map(function (c) {
      var ua = el('span', null, null, '~' + c.userAgents + ' ');
      if (c.shared) {
        el('span', {'class': 'tag'}, ua, 'shared address?');
      }
      return [c.client, n(c.refused), n(c.shadowRefused), n(c.requests), c.peak + ' '
        + (c.peakRule || ''), c.peakTime, c.firstRefusal + ' ' + c.firstRule, ua];
    }), [false, true, true, true, false, false, false, false]);
    if (p.shared.length) {
      el('p', {'class': 'warn'}, s, 'Look like shared addresses (many user agents or sessions '
        + 'behind one refused address, such as a school or an office behind NAT): '
        + p.shared.join(', '));
    }
  }

  function compare() {
    var s = el('section', {id: 'compare'}, main);
    el('h2', null, s, 'Compared: ' + data.policy + ' and ' + data.compare);
    var pair = el('div', {'class': 'pair'}, s);
    [[data.onlyA, 'Refused by ' + data.policy + ' only'],
      [data.onlyB, 'Refused by ' + data.compare + ' only']].forEach(function (x) {
      var d = el('div', null, pair);
      el('h3', null, d, x[1] + ': ' + x[0].length + (x[0].length ? '' : ' clients'));
      SluiceCharts.bars(el('div', {'class': 'chart'}, d), {xLabel: 'refused requests',
        title: x[1], items: x[0].slice(0, 10).map(function (c) {
          return {label: c.client, value: c.refused};
        })});
    });
  }

  var head = document.getElementById('head');
  head.textContent = data.inputs.map(function (i) {
    return i.name + ' (' + i.format + ', ' + n(i.lines) + ' lines)';
  }).join(', ') + (data.from ? '; ' + data.from + ' to ' + data.to : '') + '; '
    + n(data.decided) + ' requests decided, ' + n(data.notParsed) + ' lines not parsed';
  if (data.a) {
    overview(data.a, data.policy, 'a');
    if (data.b) {
      overview(data.b, data.compare, 'b');
      compare();
    }
    rules(data.a, data.policy, 'a');
    refused(data.a, data.policy, 'a');
    if (data.b) {
      refused(data.b, data.compare, 'b');
    }
  }
  if (data.notParsed) {
    var bad = el('section', {id: 'not-parsed'}, main);
    el('h2', null, bad, n(data.notParsed) + ' lines not parsed');
    var ul = el('ul', null, bad);
    data.notParsedFirst.forEach(function (b) {
      el('li', null, ul, b);
    });
  }
  var notes = el('section', {id: 'notes'}, main);
  el('h2', null, notes, 'How to read this');
  el('p', {'class': 'note'}, notes, 'Every line was decided by Sluice\'s engine and policy '
    + 'matching on a clock driven by the log\'s timestamps. A client\'s peak is the largest '
    + 'count of its requests within the rule\'s window (as a sliding window counts them, '
    + 'refused requests included): a limit of L per window refuses, roughly, the clients '
    + 'above L. Times are UTC.' + (data.clientsApproximate ? ' More clients than the table '
    + 'holds: some were counted twice in the peaks.' : ''));
}());
