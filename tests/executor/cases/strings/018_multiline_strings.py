text = """line one
line two
    indented"""
print(text)
print(text.splitlines())
lines = [l.strip() for l in text.split('\n')]
lines
