# expect: refused Forbidden access to dunder attribute: __class__
'{x.__class__}'.format_map({'x': 1})
