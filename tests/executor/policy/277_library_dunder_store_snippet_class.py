# imports: pandas, pandas.*
# expect: refused Forbidden while a snippet runs: pandas.core.accessor's code setting dunder '__dataframe__' of class Base
# As 276, with the snippet's own class handed to delegate_names: a library's store of a dunder
# a snippet's class may not define is refused on the snippet's classes too.
import pandas
from pandas.core.accessor import delegate_names, PandasDelegate
class Base(PandasDelegate):
    def _delegate_method(self, name, *args, **kwargs):
        print('snippet _delegate_method answered', name, args, kwargs)
        return 'snippet interchange object'
delegate_names(delegate=pandas.DataFrame, accessors=['__dataframe__'], typ='method')(Base)
print('stored on Base')
print(pandas.api.interchange.from_dataframe(Base()))
