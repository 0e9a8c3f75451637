/*
 * Draws one widget's data: the one chart module of the browser side, shared by the share-link viewer page (/s/{token})
 * and the export render pages. Charts (bar, line, area, pie, scatter) are Apache ECharts, loaded before this module
 * as the global `echarts` (echarts.min.js); a table, a pivot and a KPI are plain DOM.
 *
 *   drawWidget(element, widget, data) -> { chart }   (chart: the ECharts instance, or null for DOM kinds)
 *
 * `widget` is { type, rows, series, columns } with shelf fields { id, title }; `data` is the widget data answer:
 * { kind: 'flat', rows: [{ <shelf id>: value }] } or { kind: 'kpi', row: { <shelf id>: value } }.
 */

const CHART_KINDS = new Set(['bar', 'line', 'area', 'pie', 'scatter']);

const num = (v) => (v === null || v === undefined || v === '' ? null : Number(v));
const text = (v) => (v === null || v === undefined ? '—' : String(v));
const label = (f) => f.title || f.id;

/** The category of a row: the values of the widget's row shelf fields, joined. */
const categoryOf = (widget, row) => widget.rows.map((f) => text(row[f.id])).join(' · ');

/** The ECharts option for a chart kind (exported for tests and the render pages). */
export function chartOption(widget, data) {
  const rows = data.kind === 'flat' ? data.rows : [data.row];
  const base = {
    animation: false,
    tooltip: { trigger: widget.type === 'pie' ? 'item' : 'axis' },
    grid: { containLabel: true, left: 8, right: 8, top: 32, bottom: 8 },
  };
  if (widget.type === 'pie') {
    const measure = widget.columns[0];
    return {
      ...base,
      legend: { type: 'scroll', top: 0 },
      series: [
        {
          type: 'pie',
          name: measure ? label(measure) : '',
          radius: ['0%', '70%'],
          center: ['50%', '58%'],
          data: rows.map((r) => ({ name: categoryOf(widget, r), value: measure ? num(r[measure.id]) : null })),
        },
      ],
    };
  }
  if (widget.type === 'scatter') {
    const [x, y] = widget.columns;
    return {
      ...base,
      tooltip: { trigger: 'item' },
      xAxis: { type: 'value', name: x ? label(x) : '' },
      yAxis: { type: 'value', name: y ? label(y) : '' },
      series: [{ type: 'scatter', data: rows.map((r) => [num(r[x?.id]), num(r[y?.id])]) }],
    };
  }
  const kind = widget.type === 'area' ? 'line' : widget.type;
  const categories = [...new Set(rows.map((r) => categoryOf(widget, r)))];
  let series;
  if (widget.series.length && widget.columns.length) {
    // A series shelf splits the first measure into one series per value.
    const splitBy = widget.series[0];
    const measure = widget.columns[0];
    const names = [...new Set(rows.map((r) => text(r[splitBy.id])))];
    series = names.map((name) => {
      const byCategory = new Map(
        rows.filter((r) => text(r[splitBy.id]) === name).map((r) => [categoryOf(widget, r), num(r[measure.id])]),
      );
      return { type: kind, name, data: categories.map((c) => byCategory.get(c) ?? null) };
    });
  } else {
    series = widget.columns.map((m) => ({
      type: kind,
      name: label(m),
      data: rows.map((r) => num(r[m.id])),
    }));
  }
  if (widget.type === 'area') for (const s of series) s.areaStyle = {};
  return {
    ...base,
    legend: { top: 0 },
    xAxis: { type: 'category', data: categories },
    yAxis: { type: 'value' },
    series,
  };
}

function drawKpi(element, widget, data) {
  const measure = widget.columns[0];
  const row = data.kind === 'kpi' ? data.row : (data.rows[0] ?? {});
  const value = measure ? row[measure.id] : null;
  const box = document.createElement('div');
  box.className = 'kpi';
  const figure = document.createElement('div');
  figure.className = 'kpi-value';
  figure.textContent = typeof value === 'number' ? value.toLocaleString('ru-RU') : text(value);
  figure.dataset.value = value === null || value === undefined ? '' : String(value);
  box.append(figure);
  element.replaceChildren(box);
}

function drawTable(element, widget, data) {
  const fields = [...widget.rows, ...widget.series, ...widget.columns];
  const rows = data.kind === 'flat' ? data.rows : [data.row];
  const table = document.createElement('table');
  table.className = 'data-table';
  const head = table.createTHead().insertRow();
  for (const f of fields) {
    const th = document.createElement('th');
    th.textContent = label(f);
    head.append(th);
  }
  const body = table.createTBody();
  for (const r of rows) {
    const tr = body.insertRow();
    for (const f of fields) {
      const td = tr.insertCell();
      td.textContent = text(r[f.id]);
      if (typeof r[f.id] === 'number') td.className = 'num';
    }
  }
  element.replaceChildren(table);
}

/** Draws the widget into `element` (emptied first); a chart kind keeps its ECharts instance on the element. */
export function drawWidget(element, widget, data) {
  const previous = globalThis.echarts?.getInstanceByDom(element);
  if (previous) previous.dispose();
  if (widget.type === 'kpi') {
    drawKpi(element, widget, data);
    return { chart: null };
  }
  if (!CHART_KINDS.has(widget.type)) {
    drawTable(element, widget, data);
    return { chart: null };
  }
  element.replaceChildren();
  const chart = globalThis.echarts.init(element, null, { renderer: 'canvas' });
  chart.setOption(chartOption(widget, data));
  return { chart };
}
