# imports: copy, calendar, json, json.decoder
# expect: logs calendar: Forbidden: copy writing state or items into a TextCalendar object it did not make (the reducer's function returned an object that exists already); Monday first: True; items: Forbidden: copy writing state or items into a dict object it did not make (the reducer's function returned an object that exists already); untouched: True; made: 3 [1, 2] 3 [1, 2]
# A reducer the snippet files in copy.dispatch_table chooses y = func(*args), and copy then
# writes the reducer's state into y's dict (or passes it to y's __setstate__) and appends its
# items to y: a func returning an object that exists already had copy change a library's
# shared object for every later caller. calendar.c is the TextCalendar calendar.month() and
# calendar.monthcalendar() format with: state {'_firstweekday': 6} made weeks start on
# Sunday; json.decoder.BACKSLASH, the pure-Python scanner's escape table, took items. copy
# writes state and items only into an object func has just made; a fresh object still
# takes both, shallow and deep.
import copy, calendar, json, json.decoder
def shared_calendar():
    return calendar.c
def shared_table():
    return json.decoder.BACKSLASH
class L(list):
    pass
def attempt(fn, x):
    try:
        fn(x)
        return 'copied'
    except Exception as e:
        return str(e)
class R:
    pass
copy.dispatch_table[R] = lambda r: (shared_calendar, (), {'_firstweekday': 6})
cal = attempt(copy.copy, R())
monday = calendar.monthcalendar(2026, 11)[0][0] == 0
class S:
    pass
copy.dispatch_table[S] = lambda s: (shared_table, (), None, None, iter([('q', 'Q')]))
items = attempt(copy.deepcopy, S())
untouched = 'q' not in json.decoder.BACKSLASH
class T:
    pass
copy.dispatch_table[T] = lambda t: (L, (), {'a': 3}, iter([1, 2]))
y, z = copy.copy(T()), copy.deepcopy(T())
print(f'calendar: {cal}; Monday first: {monday}; items: {items}; untouched: {untouched}; '
      f'made: {y.a} {list(y)} {z.a} {list(z)}')
