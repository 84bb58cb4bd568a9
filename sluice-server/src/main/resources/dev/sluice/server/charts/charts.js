/*
 * Sluice's charts: inline SVG drawn by this file alone (no library, no build step, no network).
 * Used by the replay report (inlined into one HTML file) and by the console (served as a file).
 *
 * Why written here rather than a charting library: the three charts we need (a time series, a
 * histogram with a limit line, horizontal bars) fit in a few hundred lines, where the smallest
 * maintained libraries are tens of kilobytes minified and need a bundler to be vendored; the
 * report must open from disk with no network; and the console runs under a strict
 * Content-Security-Policy, so nothing here evaluates strings or sets style attributes: colours
 * and dashes are SVG presentation attributes, the rest is classes that charts.css styles.
 *
 *   SluiceCharts.timeSeries(el, {series: [{name, points: [[epochMillis, value], ...]}],
 *       yLabel, stacked, utc, title})                    -> {update(data), svg}
 *   SluiceCharts.histogram(el, {bins: [{from, to, count}], marker: {value, label},
 *       xLabel, yLabel, logX, logY, title})              -> {update(data), svg}
 *   SluiceCharts.bars(el, {items: [{label, value}], xLabel, title}) -> {update(data), svg}
 *
 * update(data) redraws into the same <svg> (the console calls it every second); fields absent
 * from data keep their earlier values. Every chart is role="img" with a <title> and a <desc>
 * that says in words what it shows, and text labels on its axes.
 */
(function (global) {
  'use strict';

  var NS = 'http://www.w3.org/2000/svg';
  var PALETTE = ['#2b6cb0', '#c53030', '#dd6b20', '#2f855a', '#6b46c1', '#b7791f', '#319795',
    '#97266d'];
  var serial = 0;

  function node(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    if (attrs) {
      for (var k in attrs) {
        if (Object.prototype.hasOwnProperty.call(attrs, k) && attrs[k] !== undefined) {
          e.setAttribute(k, String(attrs[k]));
        }
      }
    }
    if (parent) {
      parent.appendChild(e);
    }
    return e;
  }

  function text(parent, x, y, s, cls, anchor) {
    var t = node('text', {x: round(x), y: round(y), 'class': cls || 'sc-label',
      'text-anchor': anchor || 'start'}, parent);
    t.textContent = s;
    return t;
  }

  function round(v) {
    return Math.round(v * 10) / 10;
  }

  function colour(i) {
    return PALETTE[i % PALETTE.length];
  }

  /** 1234 -> "1.2k", 0.25 -> "0.25". */
  function fmt(v) {
    if (v === null || v === undefined || isNaN(v)) {
      return '';
    }
    var a = Math.abs(v);
    if (a >= 1e9) {
      return trim(v / 1e9) + 'G';
    }
    if (a >= 1e6) {
      return trim(v / 1e6) + 'M';
    }
    if (a >= 1e4) {
      return trim(v / 1e3) + 'k';
    }
    if (a >= 100 || a === Math.floor(a)) {
      return String(Math.round(v));
    }
    return trim(v);
  }

  function trim(v) {
    return String(Math.round(v * 100) / 100);
  }

  /** Round steps (1, 2, 5 times a power of ten) covering [min, max] with about count ticks. */
  function ticks(min, max, count) {
    if (!(max > min)) {
      max = min + 1;
    }
    var raw = (max - min) / Math.max(1, count);
    var p = Math.pow(10, Math.floor(Math.log(raw) / Math.LN10));
    var f = raw / p;
    var step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
    var out = [];
    for (var v = Math.ceil(min / step) * step; v <= max + step * 1e-9 && out.length < 50;
      v += step) {
      out.push(Math.round(v / step) * step);
    }
    return out;
  }

  var SECOND = 1000;
  var MINUTE = 60 * SECOND;
  var HOUR = 60 * MINUTE;
  var DAY = 24 * HOUR;
  var TIME_STEPS = [SECOND, 2 * SECOND, 5 * SECOND, 10 * SECOND, 15 * SECOND, 30 * SECOND, MINUTE,
    2 * MINUTE, 5 * MINUTE, 10 * MINUTE, 15 * MINUTE, 30 * MINUTE, HOUR, 2 * HOUR, 3 * HOUR,
    6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 30 * DAY];

  function timeTicks(min, max, count, utc) {
    var step = TIME_STEPS[TIME_STEPS.length - 1];
    for (var i = 0; i < TIME_STEPS.length; i++) {
      if (TIME_STEPS[i] * count >= max - min) {
        step = TIME_STEPS[i];
        break;
      }
    }
    // Local ticks fall on local round times: shift by the zone's offset before rounding.
    var offset = utc || step < HOUR ? 0 : new Date(min).getTimezoneOffset() * MINUTE;
    var out = [];
    for (var t = Math.ceil((min - offset) / step) * step + offset; t <= max && out.length < 50;
      t += step) {
      out.push(t);
    }
    return {values: out, step: step};
  }

  function pad2(n) {
    return n < 10 ? '0' + n : String(n);
  }

  function timeLabel(t, step, utc) {
    var d = new Date(t);
    var h = utc ? d.getUTCHours() : d.getHours();
    var m = utc ? d.getUTCMinutes() : d.getMinutes();
    var s = utc ? d.getUTCSeconds() : d.getSeconds();
    if (step >= DAY) {
      var mo = (utc ? d.getUTCMonth() : d.getMonth()) + 1;
      var day = utc ? d.getUTCDate() : d.getDate();
      return pad2(mo) + '-' + pad2(day);
    }
    if (step >= MINUTE) {
      return pad2(h) + ':' + pad2(m);
    }
    return pad2(h) + ':' + pad2(m) + ':' + pad2(s);
  }

  function isoTime(t, utc) {
    var d = new Date(t);
    if (utc) {
      return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
    }
    return d.getFullYear() + '-' + pad2(d.getMonth() + 1) + '-' + pad2(d.getDate()) + ' '
      + pad2(d.getHours()) + ':' + pad2(d.getMinutes()) + ':' + pad2(d.getSeconds());
  }

  function size(el, opts, defaultHeight) {
    var w = opts.width || (el && el.clientWidth) || 640;
    return {w: Math.max(240, Math.min(w, 1600)), h: opts.height || defaultHeight};
  }

  /** The <svg> of a chart: one per element, kept across updates. */
  function root(el, kind) {
    var svg = node('svg', {'class': 'sluice-chart sluice-chart-' + kind, role: 'img',
      xmlns: NS, focusable: 'false'});
    var id = 'sluice-chart-' + (++serial);
    var title = node('title', {id: id + '-title'}, svg);
    var desc = node('desc', {id: id + '-desc'}, svg);
    svg.setAttribute('aria-labelledby', id + '-title');
    svg.setAttribute('aria-describedby', id + '-desc');
    el.appendChild(svg);
    return {svg: svg, title: title, desc: desc};
  }

  function clear(r) {
    while (r.svg.lastChild && r.svg.lastChild !== r.desc) {
      r.svg.removeChild(r.svg.lastChild);
    }
  }

  function frame(r, w, h) {
    r.svg.setAttribute('viewBox', '0 0 ' + w + ' ' + h);
    r.svg.setAttribute('width', w);
    r.svg.setAttribute('height', h);
    return node('g', {'class': 'sc-body'}, r.svg);
  }

  function merge(into, from) {
    var out = {};
    var k;
    for (k in into) {
      if (Object.prototype.hasOwnProperty.call(into, k)) {
        out[k] = into[k];
      }
    }
    for (k in from || {}) {
      if (Object.prototype.hasOwnProperty.call(from, k)) {
        out[k] = from[k];
      }
    }
    return out;
  }

  /** A legend across the top; returns its height. */
  function legend(g, names, w, x0) {
    var x = x0;
    var y = 14;
    for (var i = 0; i < names.length; i++) {
      var label = String(names[i]);
      var width = 18 + label.length * 6.5 + 12;
      if (x + width > w && x > x0) {
        x = x0;
        y += 16;
      }
      node('rect', {x: x, y: y - 9, width: 12, height: 10, fill: colour(i),
        'class': 'sc-legend-key'}, g);
      text(g, x + 16, y, label, 'sc-legend');
      x += width;
    }
    return y + 10;
  }

  function yAxis(g, left, right, top, bottom, scale, values, label, format) {
    for (var i = 0; i < values.length; i++) {
      var y = scale(values[i]);
      node('line', {x1: left, x2: right, y1: round(y), y2: round(y), stroke: '#d8dde3',
        'stroke-width': 1, 'class': 'sc-grid'}, g);
      text(g, left - 6, y + 4, format(values[i]), 'sc-tick', 'end');
    }
    node('line', {x1: left, x2: left, y1: top, y2: bottom, stroke: '#5f6b7a',
      'class': 'sc-axis'}, g);
    if (label) {
      var t = text(g, 0, 0, label, 'sc-axis-label', 'middle');
      t.setAttribute('transform', 'translate(12 ' + round((top + bottom) / 2) + ') rotate(-90)');
    }
  }

  function xAxisLine(g, left, right, bottom) {
    node('line', {x1: left, x2: right, y1: bottom, y2: bottom, stroke: '#5f6b7a',
      'class': 'sc-axis'}, g);
  }

  function empty(g, w, h) {
    text(g, w / 2, h / 2, 'no data', 'sc-empty', 'middle');
  }

  // ---------------------------------------------------------------- time series

  function timeSeries(el, options) {
    var opts = merge({series: [], stacked: false, utc: false}, options);
    var r = root(el, 'timeseries');

    function draw() {
      clear(r);
      var series = opts.series || [];
      var dim = size(el, opts, 240);
      var w = dim.w;
      var h = dim.h;
      var g = frame(r, w, h);
      var left = 58;
      var right = w - 14;
      var names = series.map(function (s) {
        return s.name;
      });
      var top = legend(g, names, right, left) + 8;
      var bottom = h - 30;
      r.title.textContent = opts.title || ((opts.yLabel || 'values') + ' over time'
        + (names.length ? ': ' + names.join(', ') : ''));
      var xs = [];
      var seen = {};
      series.forEach(function (s) {
        (s.points || []).forEach(function (p) {
          if (!seen[p[0]]) {
            seen[p[0]] = true;
            xs.push(p[0]);
          }
        });
      });
      xs.sort(function (a, b) {
        return a - b;
      });
      if (!xs.length) {
        r.desc.textContent = 'No data yet.';
        xAxisLine(g, left, right, bottom);
        empty(g, w, h);
        return;
      }
      // Per series, its value at each x (0 where it has none), stacked when asked.
      var rows = series.map(function (s) {
        var at = {};
        (s.points || []).forEach(function (p) {
          at[p[0]] = +p[1] || 0;
        });
        return xs.map(function (x) {
          return at[x] || 0;
        });
      });
      var lower = rows.map(function () {
        return xs.map(function () {
          return 0;
        });
      });
      if (opts.stacked) {
        for (var i = 1; i < rows.length; i++) {
          for (var j = 0; j < xs.length; j++) {
            lower[i][j] = lower[i - 1][j] + rows[i - 1][j];
          }
        }
      }
      var maxY = 0;
      rows.forEach(function (row, i) {
        row.forEach(function (v, j) {
          maxY = Math.max(maxY, v + lower[i][j]);
        });
      });
      var minX = xs[0];
      var maxX = xs[xs.length - 1] === minX ? minX + SECOND : xs[xs.length - 1];
      var yt = ticks(0, maxY || 1, 4);
      var topY = yt[yt.length - 1];
      function sx(x) {
        return left + (x - minX) / (maxX - minX) * (right - left);
      }
      function sy(y) {
        return bottom - y / topY * (bottom - top);
      }
      yAxis(g, left, right, top, bottom, sy, yt, opts.yLabel, fmt);
      xAxisLine(g, left, right, bottom);
      var tt = timeTicks(minX, maxX, 6, opts.utc);
      tt.values.forEach(function (t) {
        var x = sx(t);
        node('line', {x1: round(x), x2: round(x), y1: bottom, y2: bottom + 4, stroke: '#5f6b7a',
          'class': 'sc-axis'}, g);
        text(g, x, bottom + 16, timeLabel(t, tt.step, opts.utc), 'sc-tick', 'middle');
      });
      rows.forEach(function (row, i) {
        var d = '';
        for (var j = 0; j < xs.length; j++) {
          d += (j ? 'L' : 'M') + round(sx(xs[j])) + ' ' + round(sy(row[j] + lower[i][j]));
        }
        var sg = node('g', {'class': 'sc-series sc-series-' + i}, g);
        var st = node('title', null, sg);
        var total = row.reduce(function (a, b) {
          return a + b;
        }, 0);
        st.textContent = series[i].name + ': total ' + fmt(total) + ', peak '
          + fmt(Math.max.apply(null, row));
        if (opts.stacked) {
          var back = '';
          for (var k = xs.length - 1; k >= 0; k--) {
            back += 'L' + round(sx(xs[k])) + ' ' + round(sy(lower[i][k]));
          }
          node('path', {d: d + back + 'Z', fill: colour(i), 'fill-opacity': 0.35,
            stroke: 'none', 'class': 'sc-area'}, sg);
        }
        if (xs.length === 1) {
          node('circle', {cx: round(sx(xs[0])), cy: round(sy(row[0] + lower[i][0])), r: 3,
            fill: colour(i), 'class': 'sc-point'}, sg);
        } else {
          node('path', {d: d, fill: 'none', stroke: colour(i), 'stroke-width': 1.6,
            'stroke-linejoin': 'round', 'class': 'sc-line'}, sg);
        }
      });
      r.desc.textContent = (opts.stacked ? 'Stacked ' : '') + 'time series from '
        + isoTime(minX, opts.utc) + ' to ' + isoTime(xs[xs.length - 1], opts.utc) + '; '
        + series.map(function (s, i) {
          return s.name + ' peaks at ' + fmt(Math.max.apply(null, rows[i]));
        }).join('; ') + '.';
    }

    draw();
    return {
      svg: r.svg,
      update: function (data) {
        opts = merge(opts, data);
        draw();
      }
    };
  }

  // ---------------------------------------------------------------- histogram

  function histogram(el, options) {
    var opts = merge({bins: [], logX: false, logY: false}, options);
    var r = root(el, 'histogram');

    function draw() {
      clear(r);
      var bins = (opts.bins || []).filter(function (b) {
        return b.to > b.from;
      });
      var dim = size(el, opts, 240);
      var w = dim.w;
      var h = dim.h;
      var g = frame(r, w, h);
      var left = 58;
      var right = w - 14;
      var top = 26;
      var bottom = h - 40;
      var markers = opts.markers || (opts.marker ? [opts.marker] : []);
      r.title.textContent = opts.title || ('Distribution of ' + (opts.xLabel || 'values'));
      if (!bins.length) {
        r.desc.textContent = 'No data.';
        xAxisLine(g, left, right, bottom);
        empty(g, w, h);
        return;
      }
      var minX = bins[0].from;
      var maxX = bins[bins.length - 1].to;
      markers.forEach(function (m) {
        minX = Math.min(minX, m.value);
        maxX = Math.max(maxX, m.value);
      });
      var logX = opts.logX && minX > 0;
      function fx(v) {
        return logX ? Math.log(v) / Math.LN10 : v;
      }
      function sx(v) {
        return left + (fx(v) - fx(minX)) / ((fx(maxX) - fx(minX)) || 1) * (right - left);
      }
      var maxC = 0;
      var total = 0;
      bins.forEach(function (b) {
        maxC = Math.max(maxC, b.count);
        total += b.count;
      });
      var yt;
      var sy;
      if (opts.logY) {
        // log10(1 + count): a bin of 1 stays visible beside a bin of a million.
        var decades = Math.max(1, Math.ceil(Math.log(maxC + 1) / Math.LN10));
        yt = [];
        for (var d = 0; d <= decades; d++) {
          yt.push(d === 0 ? 0 : Math.pow(10, d));
        }
        sy = function (c) {
          return bottom - Math.log(c + 1) / Math.LN10 / decades * (bottom - top);
        };
      } else {
        yt = ticks(0, maxC || 1, 4);
        var topC = yt[yt.length - 1];
        sy = function (c) {
          return bottom - c / topC * (bottom - top);
        };
      }
      yAxis(g, left, right, top, bottom, sy, yt, opts.yLabel, fmt);
      xAxisLine(g, left, right, bottom);
      var bg = node('g', {'class': 'sc-bins'}, g);
      bins.forEach(function (b) {
        var x0 = sx(b.from);
        var x1 = sx(b.to);
        var y = sy(b.count);
        var rect = node('rect', {x: round(x0 + 0.5), y: round(y),
          width: round(Math.max(1, x1 - x0 - 1)), height: round(Math.max(0, bottom - y)),
          fill: colour(0), 'class': 'sc-bin'}, bg);
        node('title', null, rect).textContent = fmt(b.from) + ' to ' + fmt(b.to) + ': '
          + fmt(b.count);
      });
      var xt;
      if (logX) {
        xt = [];
        for (var p = Math.floor(fx(minX)); p <= Math.ceil(fx(maxX)); p++) {
          var v = Math.pow(10, p);
          if (v >= minX && v <= maxX) {
            xt.push(v);
          }
        }
        if (xt.length < 2) {
          xt = [minX, maxX];
        }
      } else {
        xt = ticks(minX, maxX, 6);
      }
      xt.forEach(function (v) {
        var x = sx(v);
        node('line', {x1: round(x), x2: round(x), y1: bottom, y2: bottom + 4, stroke: '#5f6b7a',
          'class': 'sc-axis'}, g);
        text(g, x, bottom + 16, fmt(v), 'sc-tick', 'middle');
      });
      if (opts.xLabel) {
        text(g, (left + right) / 2, h - 6, opts.xLabel, 'sc-axis-label', 'middle');
      }
      var said = [];
      markers.forEach(function (m, i) {
        var x = sx(m.value);
        var mg = node('g', {'class': 'sc-marker'}, g);
        node('line', {x1: round(x), x2: round(x), y1: top - 6, y2: bottom, stroke: '#c53030',
          'stroke-width': 2, 'stroke-dasharray': '5 3'}, mg);
        var label = m.label || ('limit ' + fmt(m.value));
        var anchor = x > (left + right) / 2 ? 'end' : 'start';
        text(mg, x + (anchor === 'end' ? -4 : 4), top - 8 + i * 14, label, 'sc-marker-label',
          anchor);
        var above = 0;
        bins.forEach(function (b) {
          if (b.from >= m.value) {
            above += b.count;
          }
        });
        said.push(label + ' at ' + fmt(m.value) + ', with ' + fmt(above) + ' of ' + fmt(total)
          + ' above it');
      });
      r.desc.textContent = 'Histogram of ' + fmt(total) + ' ' + (opts.yLabel || 'counts')
        + ' over ' + (opts.xLabel || 'values') + ' from ' + fmt(bins[0].from) + ' to '
        + fmt(bins[bins.length - 1].to) + (said.length ? '; ' + said.join('; ') : '') + '.';
    }

    draw();
    return {
      svg: r.svg,
      update: function (data) {
        opts = merge(opts, data);
        draw();
      }
    };
  }

  // ---------------------------------------------------------------- bars

  function bars(el, options) {
    var opts = merge({items: []}, options);
    var r = root(el, 'bars');

    function draw() {
      clear(r);
      var items = opts.items || [];
      var row = 22;
      var dim = size(el, opts, 0);
      var w = dim.w;
      var h = opts.height || Math.max(60, items.length * row + 40);
      var g = frame(r, w, h);
      var longest = 0;
      items.forEach(function (it) {
        longest = Math.max(longest, String(it.label).length);
      });
      var left = Math.min(Math.max(60, Math.min(longest, 32) * 6.6 + 12), w / 2);
      var right = w - 60;
      var top = 10;
      r.title.textContent = opts.title || (opts.xLabel || 'values') + ' by item';
      if (!items.length) {
        r.desc.textContent = 'No items.';
        empty(g, w, h);
        return;
      }
      var max = 0;
      items.forEach(function (it) {
        max = Math.max(max, +it.value || 0);
      });
      items.forEach(function (it, i) {
        var y = top + i * row;
        var label = String(it.label);
        var shown = label.length > 32 ? label.slice(0, 31) + '\u2026' : label;
        var bg = node('g', {'class': 'sc-bar'}, g);
        node('title', null, bg).textContent = label + ': ' + fmt(+it.value || 0);
        text(bg, left - 6, y + 14, shown, 'sc-bar-label', 'end');
        var bw = max > 0 ? (+it.value || 0) / max * (right - left) : 0;
        node('rect', {x: left, y: y + 3, width: round(Math.max(bw, 1)), height: row - 6,
          fill: colour(it.series || 0), 'class': 'sc-bar-rect'}, bg);
        text(bg, left + bw + 4, y + 14, fmt(+it.value || 0), 'sc-bar-value');
      });
      if (opts.xLabel) {
        text(g, (left + right) / 2, h - 8, opts.xLabel, 'sc-axis-label', 'middle');
      }
      r.desc.textContent = 'Bars of ' + (opts.xLabel || 'values') + ': ' + items.slice(0, 10)
        .map(function (it) {
          return it.label + ' ' + fmt(+it.value || 0);
        }).join(', ') + (items.length > 10 ? ', and ' + (items.length - 10) + ' more' : '')
        + '.';
    }

    draw();
    return {
      svg: r.svg,
      update: function (data) {
        opts = merge(opts, data);
        draw();
      }
    };
  }

  global.SluiceCharts = {
    timeSeries: timeSeries,
    histogram: histogram,
    bars: bars,
    format: fmt,
    palette: PALETTE.slice()
  };
}(typeof window !== 'undefined' ? window : this));
