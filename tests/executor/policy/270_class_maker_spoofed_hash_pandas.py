# imports: pandas, pandas.*
# expect: refused Forbidden: metaclass M defines __eq__, __ne__ or __hash__
# As 269, with pandas' HolidayCalendarMetaClass: a snippet metaclass hashing as pandas.Series
# and equal to anything made Series a class pandas made during the run, so pandas' accessor
# registration could give it the snippet's '__dataframe__', which from_dataframe then called.
# Now refused earlier: no metaclass compares or hashes its classes otherwise than type
# (class_dunders.c); the record keyed by identity stays behind it, which refused this with
# "Forbidden while a snippet runs: pandas.core.accessor's code setting attribute '__dataframe__' of class pandas.core.series.Series".
import pandas
from pandas.tseries.holiday import AbstractHolidayCalendar, HolidayCalendarMetaClass
class K:
    def __init__(self, s):
        self.s = s
    def __call__(self, nan_as_null=False, allow_copy=True):
        print('snippet K.__call__ ran as Series.__dataframe__')
        return 'snippet interchange object'
h = hash(pandas.Series)
class M(HolidayCalendarMetaClass):
    def __hash__(cls):
        return h
    __eq__ = bool
class Cal(AbstractHolidayCalendar, metaclass=M):
    pass
print(Cal.__name__)
pandas.api.extensions.register_series_accessor('__dataframe__')(K)
print(pandas.api.interchange.from_dataframe(pandas.Series([1, 2])))
