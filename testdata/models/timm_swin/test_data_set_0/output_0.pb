
BlogitsJ(ð©^<®h¶¼eza½XÐF½¶ã=\Cì;@kZ:tÄ9=çY.¼Zš6½