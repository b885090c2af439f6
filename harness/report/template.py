"""The report's HTML: one self-contained page (inline CSS, figures as base64 PNG, no scripts, no fonts)."""

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; margin: 24px auto;
       max-width: 1360px; padding: 0 16px; color: #1d2330; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.25em; margin-top: 1.8em;
     border-bottom: 1px solid #d6dae3; padding-bottom: 4px; }
.lead { font-size: 1.05em; color: #3b4456; margin-top: 0; }
.scale { background: #fff6dc; border-left: 5px solid #e0a800; padding: 10px 14px; margin: 14px 0; }
.scale strong { display: block; margin-bottom: 4px; }
.meta { color: #4a5366; font-size: 0.92em; }
nav ul { columns: 3; font-size: 0.92em; padding-left: 18px; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.82em; margin: 8px 0; }
th, td { border: 1px solid #d6dae3; padding: 3px 5px; text-align: right; white-space: nowrap; }
th { background: #eef1f6; position: sticky; top: 0; }
td.text, th.text { text-align: left; }
td.paper, th.paper { background: #f3f6fb; color: #2b4a7a; }
tr.status-not-run td { color: #8a6d00; font-style: italic; }
tr.status-not-in-this-suite td { color: #9aa1ad; }
td.wrap { white-space: normal; min-width: 9em; text-align: left; }
.notes { font-size: 0.85em; color: #4a5366; margin: 2px 0 10px; }
figure { margin: 10px 0 18px; } figure img { max-width: 100%; border: 1px solid #e3e6ec; }
figcaption { font-size: 0.88em; color: #4a5366; }
.problems { color: #8a1c1c; font-size: 0.9em; }
footer { margin-top: 3em; font-size: 0.85em; color: #6a7384; }
</style>
</head>
<body>
<h1>{{ title }}</h1>
<p class="lead">{{ suite.description }}</p>
<div class="scale"><strong>{{ scale_headline }}</strong>{{ scale_detail }}</div>
<p class="meta">Hardware of our runs: {{ devices | join("; ") or "no runs yet" }}.
 Data: {{ datasets | join("; ") or "none" }}.
 {{ done }} of {{ total }} runs of this suite have a record{% if total > done %}; the others are shown as
 "not run"{% endif %}.
 Records: {{ commits | length }} commit(s), dated {{ date_range }}.</p>
{% if notes %}<ul class="problems">{% for n in notes %}<li>{{ n }}</li>{% endfor %}</ul>{% endif %}
{% if answer_lines %}<div class="answer"><h2 id="answer">The answer so far</h2>
<ul>{% for line in answer_lines %}<li>{{ line }}</li>{% endfor %}</ul>
<p class="notes">Figure 3's claim, where tested above: each point's top-1 against the baseline curve (its runs
at several epoch settings, joined by straight lines) at the same training time; positive means multigrid is
ahead. A paper table's order: every two of its rows that the paper ranks, ranked the same way by ours
(differences under 0.5 points or 0.05× count as ties). The verdict table below gives each run's accuracy
difference with its interval and its speedup.</p></div>
{% endif %}
{% if history_lines %}<h2 id="history">Earlier settings of this scale</h2>
<ul>{% for line in history_lines %}<li>{{ line }}</li>{% endfor %}</ul>
<p class="notes">Records of earlier settings of this scale, kept aside in folders below the scale's (none of them
in the tables of this page): what each setting differed in from the runs shown (its 1.0× baseline's settings
against the current baseline's), its baseline's accuracy, and its runs against that baseline by the same verdict
rules.</p>
{% endif %}
<nav><ul>
{% for t in paper_tables %}<li><a href="#t-{{ t.id }}">{{ t.title }}</a></li>{% endfor %}
<li><a href="#figure-3">Figure 3: training time vs accuracy</a></li>
<li><a href="#t-runs">{{ runs_table.title }}</a></li>
<li><a href="#figure-2">Figure 2: mini-batch shape over iterations</a></li>
<li><a href="#t-data_wait">Per phase: data wait, layout and time per iteration</a></li>
<li><a href="#t-provenance">Provenance</a></li>
</ul></nav>

{% macro render(table) %}
<h2 id="t-{{ table.id }}">{{ table.title }}</h2>
<div class="table-wrap"><table>
<thead><tr>{% for c in shown(table) %}<th class="{{ cell_class(c) }}">{{ c.label }}</th>{% endfor %}</tr></thead>
<tbody>
{% for row in table.rows %}<tr class="status-{{ (row.get('status') or 'ok') | replace(' ', '-') }}">
{%- for c in shown(table) %}<td class="{{ cell_class(c) }}">{{ fmt(row.get(c.key), c.kind) }}</td>{% endfor -%}
</tr>
{% endfor %}</tbody></table></div>
{% for n in table.notes %}<p class="notes">{{ n }}</p>{% endfor %}
{% endmacro %}

{% for t in paper_tables %}{{ render(t) }}
{% if t.id == "convergence" and fig_convergence %}<figure><img alt="Baseline top-1 against epochs"
 src="data:image/png;base64,{{ fig_convergence }}"><figcaption>The baseline's validation and training top-1
against its epochs (error bars: ± one standard deviation over seeds where a setting has several).</figcaption>
</figure>{% endif %}
{% endfor %}

<h2 id="figure-3">Figure 3: training time vs accuracy</h2>
{% if fig3 %}<figure><img alt="Figure 3: training time vs accuracy per method" src="data:image/png;base64,{{ fig3 }}">
<figcaption>Left: our runs, measured training wall-clock (evaluation excluded) against final {{ metric_label }};
each point is labelled with its epoch factor. Right: the paper's tabulated points of the same rows, at relative
training time 1 / speedup.{{ " Accuracy at this scale is not comparable to the paper's." if not comparable }}
</figcaption></figure>
{% else %}<p class="notes">No run with a measured time and accuracy yet.</p>{% endif %}
{{ render(runs_table) }}

<h2 id="figure-2">Figure 2: mini-batch shape over iterations</h2>
{% if fig2 %}<figure><img alt="Figure 2: per-GPU mini-batch and clip size over iterations per run"
 src="data:image/png;base64,{{ fig2 }}">
<figcaption>The plan of each schedule, rebuilt from its record's spec: per-GPU mini-batch (left) and clip size
t·s² relative to the baseline's T·S² (right), on log₂ axes, over the iteration index (shared). Multigrid keeps
batch × clip size roughly constant (paper Eq. 1); the short cycle alternates shapes from one iteration to the
next. Where a method runs at several epoch factors, one run stands for it (named in brackets): the others
stretch the same sequence of shapes.{{ sampled }}</figcaption>
</figure>{% else %}<p class="notes">No records yet.</p>{% endif %}

{% if fig_wait %}<figure><img alt="Data-wait share per phase" src="data:image/png;base64,{{ fig_wait }}">
<figcaption>Share of the training wall-clock spent waiting for the data loader: bars for whole runs, dots for
the phases of each run's plan.</figcaption></figure>
{% endif %}
{{ render(data_wait_table) }}

{{ render(provenance_table) }}
<p class="meta">Commits: {{ commits | join(", ") or "none" }}.<br>
Versions: {{ versions | join("; ") or "none" }}.</p>

<footer>Generated by <code>harness report --suite {{ suite.name }}</code> from the run records in
<code>results/{{ suite.name }}/</code> and the paper's numbers in <code>suites/paper/paper_results.csv</code>.
The same tables are in <code>tables.csv</code> and <code>tables.md</code> beside this file.</footer>
</body>
</html>
"""

INDEX = """<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Multigrid reproduction: reports</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; margin: 24px auto;
       max-width: 1100px; padding: 0 16px; color: #1d2330; }
table { border-collapse: collapse; } th, td { border: 1px solid #d6dae3; padding: 4px 9px; text-align: left; }
th { background: #eef1f6; } .none { color: #9aa1ad; }
</style></head>
<body>
<h1>Multigrid reproduction: reports</h1>
<p>One report per suite: the paper's tables (Wu et al., CVPR 2020) with our measured numbers beside them.</p>
<table><thead><tr><th>suite</th><th>what</th><th>scale</th><th>runs with a record</th><th>newest record</th></tr>
</thead><tbody>
{% for s in suites %}<tr>
<td>{% if s.href %}<a href="{{ s.href }}">{{ s.name }}</a>
{%- else %}<span class="none">{{ s.name }}</span>{% endif %}</td>
<td>{{ s.description }}</td><td>{{ s.scale or "" }}</td>
<td>{% if s.href %}{{ s.done }} of {{ s.total }}{% else %}<span class="none">no report yet</span>{% endif %}</td>
<td>{{ s.newest or "" }}</td></tr>
{% endfor %}</tbody></table>
{% if collections %}<p>Reports of other settings, each a folder of reports with its own index:
{% for c in collections %}<a href="{{ c }}/index.html">{{ c }}</a>{% if not loop.last %}, {% endif %}{% endfor %}.</p>
{% endif %}
{% if overview %}<h2>Every paper table in one place</h2>
<table><thead><tr>{% for h in overview_header %}<th>{{ h }}</th>{% endfor %}</tr></thead><tbody>
{% for row in overview %}<tr>{% for c in row %}<td>{{ c }}</td>{% endfor %}</tr>
{% endfor %}</tbody></table>
<p>{{ overview_note }}</p>{% endif %}
</body></html>
"""
