import gzip, numpy as np, glob
cols=['sum','median','iq','low75','trim10','p10','min']
def mbb_se(r, rng, B=300):
    n=len(r); L=max(1,int(round(n**(1/3)))); nb=n//L
    meds=[]
    for _ in range(B):
        starts=rng.integers(0,n-L+1,nb)
        idx=(starts[:,None]+np.arange(L)).ravel()
        meds.append(np.median(r[idx]))
    return np.std(meds)
rng=np.random.default_rng(1)
for f in sorted(glob.glob('e-*.txt.gz')):
    a=np.array([l.split() for l in gzip.open(f,'rt') if not l.startswith('#')],dtype=float)
    T=int(a[:,0].max())+1
    print(f, 'triples',T, 'launch med ns %.0f'%(np.median(a[:,4])/2.1006))
    for ci,c in enumerate(cols):
        if c not in ('sum','median','low75'): continue
        v=np.full((T,3),np.nan)
        v[a[:,0].astype(int),a[:,2].astype(int)]=a[:,3+ci]
        ok=~np.isnan(v).any(1); v=v[ok]
        r20=v[:,2]/v[:,0]; rav=v[:,1]/np.sqrt(v[:,0]*v[:,2])
        m=np.median(rav); se=mbb_se(rav,rng); maa=np.median(r20); seaa=mbb_se(r20,rng)
        print(f'   {c:7s} 1 vs 0,2 {100*(m-1):+.3f}% se {100*se:.3f}  A/A {100*(maa-1):+.3f}% se {100*seaa:.3f}  pairSD {100*np.std(np.log(r20)):.2f}%')
