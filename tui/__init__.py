"""shardbook's terminal interface: the Textual app and the command line.

Nothing here computes a figure: panes turn their form into an engine spec, call one engine
function and render its result.
"""
