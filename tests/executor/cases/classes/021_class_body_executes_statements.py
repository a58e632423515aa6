class Config:
    items = {}
    for k in ('a', 'b'):
        items[k] = k.upper()
    del k
    if len(items) > 1:
        many = True
(Config.items, Config.many, hasattr(Config, 'k'))
