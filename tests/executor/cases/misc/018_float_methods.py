x = 2.5
(x.is_integer(), (3.0).is_integer(), x.as_integer_ratio(), float.fromhex('0x1.8p1'), (0.1).hex(), x.conjugate())
