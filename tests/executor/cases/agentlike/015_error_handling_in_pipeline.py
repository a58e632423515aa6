raw = ['10', '20', 'x', '', '30', None, '4.5']
parsed, errors = [], []
for i, v in enumerate(raw):
    try:
        parsed.append(int(v))
    except ValueError as e:
        try:
            parsed.append(float(v))
        except ValueError:
            errors.append((i, 'bad value %r' % (v,)))
    except TypeError:
        errors.append((i, 'missing'))
print(errors)
(parsed, sum(parsed))
