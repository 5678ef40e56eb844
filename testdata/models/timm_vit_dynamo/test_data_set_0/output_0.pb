
BlogitsJ(AŸ>‹.C½<–ù½ŸÆh>ERs½Ñ‘r>„ÜF¾vù‰½Q")=Fì•=