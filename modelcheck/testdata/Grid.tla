---- MODULE Grid ----
EXTENDS Naturals
VARIABLES x, y
Init == x = 0 /\ y = 0
IncX == x < 99 /\ x' = x + 1 /\ y' = y
IncY == y < 99 /\ y' = y + 1 /\ x' = x
Next == IncX \/ IncY
Bound == x + y <= 4
NoIncYFromOdd == ~(x % 2 = 1 /\ y' = y + 1)
Small == x + y <= 4
Tiny == x + y <= 6
XView == <<x, y % 2>>
====
