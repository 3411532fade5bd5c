"""Writes knownattrs.go: the public attributes of DataFrame, Series, ndarray, Tensor and None
in the libraries of the target kernel (pandas 1.5.3, numpy 1.24, torch 1.13). Run with
`go generate ./analysis/rules` (needs /usr/bin/python3 with those libraries)."""
import warnings; warnings.filterwarnings("ignore")
import numpy as np, pandas as pd, torch
def names(o):
    s=set()
    for n in dir(o):
        if n.startswith('_'): continue
        s.add(n)
    return sorted(s)
out=['// Code generated from dir() in pandas 1.5.3, numpy 1.24 and torch 1.13 (/usr/bin/python3); DO NOT EDIT.','','package rules','']
out.append('// knownAttrs lists the public attributes of common runtime types, so a rule can tell an')
out.append('// attribute is missing on a value whose type the cell itself produced.')
out.append('var knownAttrs = map[string]map[string]bool{')
for k,o in [('dataframe',pd.DataFrame),('series',pd.Series),('ndarray',np.ndarray),('tensor',torch.Tensor),('none',None)]:
    out.append('\t"%s": set(' % k)
    ns = names(o) if o is not None else []
    line='\t\t'
    for n in ns:
        piece='"%s", '%n
        if len(line)+len(piece)>95:
            out.append(line.rstrip()); line='\t\t'
        line+=piece
    if line.strip(): out.append(line.rstrip())
    out.append('\t),')
out.append('}')
open('knownattrs.go','w').write('\n'.join(out)+'\n')
