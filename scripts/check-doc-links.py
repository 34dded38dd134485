#!/usr/bin/env python3
"""Checks every relative markdown link ](path#anchor) in the repository's *.md: the file exists and, for an anchor,
a heading that GitHub turns into that anchor. Usage: scripts/check-doc-links.py [ROOT]; exit 1 if any is broken."""
import re, os, subprocess, sys
os.chdir(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
files = subprocess.run(['git','ls-files','*.md'],capture_output=True,text=True).stdout.split()
files += [f for f in subprocess.run(['git','ls-files','--others','--exclude-standard','*.md'],capture_output=True,text=True).stdout.split()]
def anchors(path):
    out=set(); counts={}
    inblock=False
    for line in open(path):
        if line.lstrip().startswith('```'): inblock=not inblock; continue
        if inblock: continue
        m=re.match(r'^(#{1,6})\s+(.*?)\s*#*\s*$', line)
        if not m: continue
        t=m.group(2).strip().lower()
        t=re.sub(r'[^\w\- ]','',t)  # drop punctuation (keeps letters, digits, _, -, space)
        a=t.replace(' ','-')
        n=counts.get(a,0); counts[a]=n+1
        out.add(a if n==0 else f'{a}-{n}')
    return out
bad=0
for f in files:
    text=open(f).read()
    text=re.sub(r'```.*?```','',text,flags=re.S)
    text=re.sub(r'`[^`\n]*`','',text)  # inline code is not a link
    for m in re.finditer(r'\]\(([^)\s]+)\)', text):
        target=m.group(1)
        if re.match(r'^[a-z]+:', target): continue
        path,_,anchor=target.partition('#')
        full=os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
        if not os.path.exists(full):
            print(f'{f}: missing file {target}'); bad+=1; continue
        if anchor:
            if os.path.isdir(full) or not full.endswith('.md'):
                print(f'{f}: anchor on non-md {target}'); bad+=1; continue
            if anchor not in anchors(full):
                print(f'{f}: missing anchor {target}'); bad+=1
print("broken:", bad, "files:", len(files))
sys.exit(1 if bad else 0)
