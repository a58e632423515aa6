class AppError(Exception):
    pass
def load():
    try:
        {}['k']
    except KeyError as e:
        raise AppError('load failed') from e
try:
    load()
except AppError as e:
    print('caught', e, type(e.__cause__).__name__ if False else 'cause-hidden')
'done'
