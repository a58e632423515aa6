class Custom(BaseException):
    pass
try:
    try:
        raise Custom('base')
    except Exception:
        print('wrong handler')
except BaseException as e:
    print('base handler', type(e).__name__)
'ok'
