# expect: refused Forbidden access to module: sys
# imports: string
# Formatter.get_field returns what the field leads to: (sys, 0), read from statistics'
# namespace. Every step of the field is checked.
import string, statistics
string.Formatter().get_field('0.sys', [statistics], {})
