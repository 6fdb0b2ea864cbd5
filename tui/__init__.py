"""shardbook's terminal interface: the Textual app, its screens and widgets.

Nothing here computes a figure: panes turn their form into an engine spec, call one engine
function and render its result. The command line (the ``cli`` package) opens it through
:func:`tui.app.make_app`; nothing here imports the command line.
"""
