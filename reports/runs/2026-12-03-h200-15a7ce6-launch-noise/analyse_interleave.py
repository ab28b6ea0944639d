import gzip, numpy as np, glob
def mbb_se(r, rng, B=300):
    n=len(r); L=max(1,int(round(n**(1/3)))); nb=n//L
    meds=[]
    for _ in range(B):
        starts=rng.integers(0,n-L+1,nb)
        idx=(starts[:,None]+np.arange(L)).ravel()
        meds.append(np.median(r[idx]))
    return np.std(meds)
rng=np.random.default_rng(1)
for f in sorted(glob.glob('i-*.txt.gz')):
    a=np.array([l.split() for l in gzip.open(f,'rt') if not l.startswith('#') and len(l.split())==7],dtype=float)
    sums=a[:,[1,3,5]]; meds=a[:,[2,4,6]]
    out=[]
    for name,v in (('sum',sums),('median',meds)):
        r20=v[:,2]/v[:,0]; rav=v[:,1]/np.sqrt(v[:,0]*v[:,2])
        m=np.median(rav); se=mbb_se(rav,rng); maa=np.median(r20); seaa=mbb_se(r20,rng)
        out.append(f'{name:6s} 1 vs 0,2 {100*(m-1):+.3f}% se {100*se:.3f} | A/A {100*(maa-1):+.3f}% se {100*seaa:.3f} pairSD {100*np.std(np.log(r20)):.2f}%')
    print(f'{f:24s} n {len(a)} ' + ' || '.join(out))
