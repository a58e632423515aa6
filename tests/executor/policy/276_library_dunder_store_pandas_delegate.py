# imports: pandas, pandas.*
# expect: refused Forbidden while a snippet runs: pandas.core.accessor's code setting dunder '__dataframe__' of class X
# pandas made X during the run with the snippet's Base as a base, so pandas' own code could
# change it; its generic delegate_names then stored a delegator under X.__dataframe__ whose
# call forwards to the snippet's _delegate_method, and from_dataframe(X()) ran snippet code
# as the interchange hook. A library stores on a class no dunder a snippet's class may not
# define, beyond the stdlib's own bookkeeping (guard_store.c).
import pandas
from pandas.tseries.holiday import AbstractHolidayCalendar, HolidayCalendarFactory
from pandas.core.accessor import delegate_names, PandasDelegate
class Base(PandasDelegate, AbstractHolidayCalendar):
    def _delegate_method(self, name, *args, **kwargs):
        print('snippet _delegate_method answered', name, args, kwargs)
        return 'snippet interchange object'
X = HolidayCalendarFactory('X', Base, AbstractHolidayCalendar, base_class=Base)
print(X, X.__module__)
delegate_names(delegate=pandas.DataFrame, accessors=['__dataframe__'], typ='method')(X)
print('stored on X')
print(pandas.api.interchange.from_dataframe(X()))
