#!/usr/bin/env python3
"""Synthetic data outputs of a given size, for scripts/bench-data.sh (issue 12).

Usage: gen-data.py SHAPE MIB   (SHAPE: find grep table repeats json log)
Deterministic: the same arguments give the same bytes.
"""
import json, random, sys
random.seed(7)
def find(n):
    out=[]; i=0
    while len(out)<n:
        d=f"./src/mod{i%97}/sub{i%13}/deep{i%5}"
        for k in range(8): out.append(f"{d}/file_{i}_{k}.rs")
        i+=1
    return out
def grep(n):
    out=[]; i=0
    while len(out)<n:
        f=f"src/module{i%211}/part{i%7}.rs"
        for k in range(5): out.append(f"{f}:{k*17+i%50+1}:    let value_{k} = compute(x, {i});")
        i+=1
    return out
def table(n):
    out=["id|name|state|region|created"]
    for i in range(n): out.append(f"{i}|user{i*7919%100000}|{'failed' if i%5000==77 else 'active'}|eu-west-1|2024-05-01 12:{i%60:02d}:00")
    return out
def repeats(n):
    out=[]
    for i in range(n):
        out.append("waiting for lock on /var/lib/dpkg/lock-frontend ..." if (i//50)%2==0 else f"progress {i//100}%")
    return out
def pjson(n):
    items=[{"name":f"pkg{i}","version":f"1.{i%10}.{i%7}","deps":{f"d{j}":f"^{j}.0" for j in range(i%4)},"tags":["a","b"][:i%3]} for i in range(n//8)]
    return json.dumps({"packages":items},indent=2).split("\n")
def log(n):
    lv=["INFO","INFO","INFO","DEBUG"]
    out=[]
    for i in range(n):
        l="ERROR" if i%9973==5 else lv[i%4]
        out.append(f"2024-05-01T12:{(i//60)%60:02d}:{i%60:02d}.{i%1000:03d}Z {l} [worker-{i%8}] handled request id={i} path=/api/v1/items/{i%977} in {i%300}ms")
    return out
gens=dict(find=find,grep=grep,table=table,repeats=repeats,json=pjson,log=log)
name=sys.argv[1]; size=int(float(sys.argv[2])*1024*1024)
g=gens[name]; n=1000
while True:
    lines=g(n); s="\n".join(lines)+"\n"
    if len(s)>=size: break
    n=int(n*size/len(s))+50
sys.stdout.write(s[:size].rsplit("\n",1)[0]+"\n")
