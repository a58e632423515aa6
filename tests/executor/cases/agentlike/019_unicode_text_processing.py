import unicodedata
words = ['Café', 'naïve', 'Ångström', 'résumé', 'plain']
def strip_accents(s):
    return ''.join(c for c in unicodedata.normalize('NFD', s) if unicodedata.category(c) != 'Mn')
table = {w: (strip_accents(w), len(w), w.casefold()) for w in words}
print(sorted(table))
table
