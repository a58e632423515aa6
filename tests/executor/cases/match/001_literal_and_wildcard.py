def http(status):
    match status:
        case 200:
            return 'ok'
        case 404 | 410:
            return 'gone'
        case 'teapot':
            return 'tea'
        case _:
            return 'other'
[http(s) for s in (200, 404, 410, 'teapot', 500)]
