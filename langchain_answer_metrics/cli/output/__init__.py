"""What the commands print and write: tables on the terminal, the HTML reports, the spend
view, the summary JSON. Laid out here, computed elsewhere: nothing in ``output/`` scores
or decides an exit code.
"""
