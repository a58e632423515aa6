# expect: refused Forbidden access to dunder attribute: __dict__
'{x.__dict__}'.format_map({'x': 1})
