import gzip, numpy as np, sys
cols=['sum','median','iq','low75','trim10','p10','min']
def load(f):
    rows=[l.split() for l in gzip.open(f,'rt') if not l.startswith('#')]
    a=np.array(rows,dtype=float)
    return a
def mbb_se(r, rng, B=300):
    n=len(r); L=max(1,int(round(n**(1/3)))); nb=n//L
    meds=[]
    for _ in range(B):
        starts=rng.integers(0,n-L+1,nb)
        idx=(starts[:,None]+np.arange(L)).ravel()
        meds.append(np.median(r[idx]))
    return np.std(meds)
rng=np.random.default_rng(1)
for mode in ['none','proc','dlsym']:
  for p in ['0','1']:
    a=load(f'exp-{mode}-{p}.txt.gz')
    T=int(a[:,0].max())+1
    out=[]
    for ci,c in enumerate(cols):
        v=np.full((T,3),np.nan)
        v[a[:,0].astype(int),a[:,2].astype(int)]=a[:,3+ci]
        ok=~np.isnan(v).any(1); v=v[ok]
        r10=v[:,1]/v[:,0]; r20=v[:,2]/v[:,0]; r12=v[:,1]/v[:,2]
        # pair proc against the mean of both dlsym blocks
        rav=v[:,1]/np.sqrt(v[:,0]*v[:,2])
        m=np.median(rav); se=mbb_se(rav,rng)
        maa=np.median(r20); seaa=mbb_se(r20,rng)
        out.append(f'{c:7s} proc/dlsym {100*(m-1):+.3f}% se {100*se:.3f}  A/A {100*(maa-1):+.3f}% se {100*seaa:.3f}  pairSD {100*np.std(np.log(r20)):.2f}%')
    med_ns=np.median(a[:,4])/2.1006
    print(mode,p,'launch median ns %.0f'%med_ns)
    print('   '+'\n   '.join(out))
