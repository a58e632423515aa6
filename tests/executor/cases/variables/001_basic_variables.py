# variables: {"x": 5, "name": "Ada", "items": [1, 2.5, null, true], "cfg": {"debug": false}}
print(name, x, items, cfg)
(x * 2, name.upper(), sum(i for i in items if isinstance(i, (int, float)) and not isinstance(i, bool)), cfg['debug'])
