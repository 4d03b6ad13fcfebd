"""The team tier's client (issue 16): `total-recall team login|enable|push|pull|status` and the hooks'
Team memory section. Files live beside the index (its state dir): `team.json` (server URL, credential,
enabled projects; mode 0600) and `team/<project id>.json` (what was sent, what the user kept private,
the last pulled items). The HTTP calls use the standard library only, so hooks stay light."""
