"""Parses an SVG of `attnc report --plot` and prints what it draws: one line
per curve (term and strategy), crossover and measured point, so that a test
can check them. Exits 1 on malformed XML."""
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
try:
    root = ET.parse(sys.argv[1]).getroot()
except ET.ParseError as error:
    sys.exit("malformed SVG: %s" % error)
if root.tag != NS + "svg":
    sys.exit("root is %s, not svg" % root.tag)
curves = [e for e in root.iter(NS + "polyline") if e.get("class") == "curve"]
for curve in curves:
    points = curve.get("points").split()
    ok = all(len(p.split(",")) == 2 for p in points)
    print("curve %s: %s (%d points%s)" % (curve.get("data-term"),
                                          curve.get("data-strategy"),
                                          len(points), "" if ok else ", BAD"))
for group in root.iter(NS + "g"):
    if group.get("class") == "crossover":
        print("crossover %s: N = %s" % (group.get("data-term"),
                                        group.get("data-n")))
for circle in root.iter(NS + "circle"):
    if circle.get("class") == "measured":
        print("measured %s: %s" % (circle.get("data-term"),
                                   circle.get("data-strategy")))
print("curves: %d" % len(curves))
