"""The style sheet of the HTML report (and of the analysis page, which adds to it).

>>> page = f"<style>{REPORT_CSS}</style>"
"""

REPORT_CSS = """
:root { --ok:#1a7f37; --good:#4c9a2a; --mid:#b7791f; --bad:#c53030; --muted:#6b7280;
        --line:#e5e7eb; --bg:#f9fafb; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "Noto Sans", sans-serif;
       margin: 0 auto; max-width: 1100px; padding: 24px; color: #111827; }
h1 { font-size: 1.6em; margin: 0 0 4px; } h2 { margin-top: 32px; }
.meta { color: var(--muted); margin: 0 0 16px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(320px, 1fr)); gap: 16px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; background: #fff; }
.card h3 { margin: 0 0 6px; font-size: 1.05em; }
.big { font-size: 2em; font-weight: 650; }
.stat { color: var(--muted); font-size: .9em; }
.models { margin: 6px 0 0; padding: 0; list-style: none; font-size: .9em; }
.gate-fail { color: var(--bad); font-weight: 600; }
table { border-collapse: collapse; width: 100%; font-size: .92em; }
th, td { border-bottom: 1px solid var(--line); padding: 6px 8px; text-align: left;
         vertical-align: top; }
th { background: var(--bg); }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.score { display: inline-block; min-width: 3.2em; padding: 1px 8px; border-radius: 10px;
         color: #fff; font-weight: 600; text-align: center; }
.band-excellent { background: var(--ok); } .band-good { background: var(--good); }
.band-moderate { background: var(--mid); } .band-poor { background: var(--bad); }
.band-none { background: var(--muted); }
.sample { border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px;
          margin: 16px 0; background: #fff; }
.sample h3 { margin: 0 0 8px; }
.sample dl { display: grid; grid-template-columns: 8em 1fr; gap: 4px 12px; margin: 0; }
.sample dt { color: var(--muted); } .sample dd { margin: 0; white-space: pre-wrap; }
.metric { border-top: 1px dashed var(--line); margin-top: 10px; padding-top: 8px; }
.metric h4 { margin: 0 0 4px; font-size: 1em; }
.reason { margin: 2px 0 6px; }
.error { color: var(--bad); }
.claims { list-style: none; padding: 0; margin: 4px 0; }
.claims li { border-left: 4px solid var(--muted); padding: 3px 8px; margin: 4px 0;
             background: var(--bg); }
.claims li.v-supported { border-color: var(--ok); }
.claims li.v-contradicted { border-color: var(--bad); }
.claims li.v-neutral { border-color: var(--mid); }
.verdict { font-size: .8em; font-weight: 700; text-transform: uppercase; margin-right: 6px; }
.v-supported .verdict, .vote-PASS { color: var(--ok); }
.v-contradicted .verdict, .vote-FAIL { color: var(--bad); }
.v-neutral .verdict { color: var(--mid); }
.why { color: #374151; font-size: .9em; }
.side { color: var(--muted); font-size: .85em; margin: 6px 0 0; }
svg.hist { display: block; width: 100%; max-width: 320px; height: auto; margin-top: 8px; }
svg.hist rect.bar { fill: #60a5fa; } svg.hist text { font-size: 9px; fill: var(--muted); }
a { color: #1d4ed8; }
.trajectory td.call { border-left: 4px solid var(--muted); background: var(--bg); }
.trajectory td.call-matched { border-color: var(--ok); }
.trajectory td.call-out_of_order { border-color: var(--mid); }
.trajectory td.call-unmatched { border-color: var(--bad); background: #fef2f2; }
.trajectory .mark { font-weight: 700; }
.steps ol { margin: 4px 0; padding-left: 2.8em; font-size: .92em; }
.steps li.step { border-left: 4px solid transparent; padding: 1px 6px; margin: 1px 0; }
.steps li.step-faulted { border-color: var(--bad); background: #fef2f2; }
.steps li.step-cited { border-color: var(--ok); }
.steps li.gap { list-style: none; }
.steps ul.faults { list-style: none; padding: 0; margin: 2px 0 4px; }
.steps .mark { color: var(--bad); font-weight: 700; }
"""
