"""Words too common in scientific writing to tell people apart, whatever the index: the
stemmed title-and-abstract words (:func:`pubsearch.index.peoplewords.text_words`) on more
than a fiftieth of the 102,289 arXiv records of 2024-2026 (CC0 metadata; 954 words).

An index of a few hundred records cannot tell from its own counts that ``train`` or
``model`` is common; these weigh nothing in :mod:`pubsearch.index.peopleevidence`'s words,
as the index's own commonest do. ``bench/people.py --common-words`` writes this module
again from the records.
"""

from __future__ import annotations

WORDS = tuple(
    """
abil ablat about acceler access account accur accuraci achiev across act action activ
adapt add addit address adjust adopt advanc advantag adversari affect after against
agent aggreg agnost agreement aim algorithm align allow alon along altern although
ambigu among analys analysi analyt analyz annot answer appear appli applic approxim
architectur area argu aris around art artifact artifici aspect assess assign assist
associ assum assumpt atom attent attribut augment autom automat autonom avail averag
avoid awar backbon background balanc band baselin becaus becom befor behavior benchmark
benefit best better between beyond bias binari black block bodi boost bottleneck bound
boundari box bridg broad budget build built calcul calibr call camera candid cannot
capabl capac captur care case categori caus causal center central centric chain challeng
chang channel character characterist chemic choic class classic classif classifi clear
clinic clip close cloud cluster coars code cognit coher collabor collaps collect combin
common communic communiti compact compar comparison competit complementari complet
complex compon composit comprehens compress compris comput concept concern condit
conduct confid configur confirm connect consequ consid consist constrain constraint
construct contain content context contextu continu contrast contribut control convent
converg convers convolut coordin core corpus correct correl correspond cosmic cosmolog
cost could coupl cover coverag creat critic cross crucial cue curat current dark data
dataset decis decod decompos decomposit decoupl deep defin degrad deliv demand demonstr
denois dens densiti depend deploy depth deriv describ descript design despit detail
detect detector determin develop devic diagnost differ differenti difficult difficulti
diffus digit dimens dimension direct discov discoveri discret discrimin discuss distanc
distil distinct distinguish distort distribut divers document doe domain domin
downstream drive driven dual due dure dynam e.g earli edg edit effect effici effort
either electron element elimin embed emerg emiss empir employ enabl encod end energi
enforc engin english enhanc ensur entir entropi environ equat error especi essenti
establish estim evalu even event evid evolut evolv examin exampl exceed excel execut
exhibit exist expand expect expens experi experiment expert explain explicit exploit
explor express extend extens extern extract extrem face facilit factor fail failur
famili fast featur feedback few fidel field filter final find fine first fit five fix
flexibl flow focus follow forc form formal format formul forward found foundat four
fraction frame framework free frequenc frequent full fulli function fundament furthermor
fuse fusion futur gain galact galaxi gap gas gaussian general generaliz generat geometr
geometri github.com given global goal govern gpt gradient grain graph gravit ground
group grow growth guid guidanc hallucin handl hard head help heterogen hierarch high
higher highlight hinder histori hole https human hybrid i.e ident identif identifi iii
imag impact implement implicit import improv includ inconsist incorpor increas independ
indic individu induc infer influenc inform inher initi initio inject innov input insight
inspir instanc instead instruct insuffici integr intellig intens inter interact interest
interfac intermedi internal interpret intervent intrins introduc invers investig involv
isol issu iter joint key knowledg known label lack languag larg larger latenc latent
layer lead learn leav length level leverag light lightweight like limit line linear
linguist link literatur llm llms local locat logic long loop loss low lower machin made
magnet magnitud main maintain major make manag manipul manual map mask mass massiv match
materi mathemat matter mean meaning measur mechan medic medium memori metal methodolog
metric minim miss mitig mix mllms modal mode model modern modifi modul molecul molecular
monitor moreov morpholog motion motiv multi multimod multipl must name natur near need
negat network neural next nois noisi non normal notabl novel number numer object observ
obtain off offer often onli onlin open oper optic optim orbit order organiz orient
origin out outcom outperform output overal overcom overhead overlook pair paradigm
parallel paramet part partial particl particular pass path pathway pattern per percept
perform persist person perspect perturb phase physic pipelin pixel plan platform
plausibl play point polici poor popul pose posit possibl post potenti power practic pre
precis predict prefer presenc preserv pretrain prevent previous primari primarili
principl prior probabl probe problem procedur process produc product profil progress
project promis prompt propag properti protocol prove provid public purpos qualit qualiti
quantifi quantit quantum queri question random rang rank rapid rate rather ratio ray
reach real realist reason recent recognit reconstruct recov redshift reduc reduct redund
refer refin reflect regim region regress regular reinforc relat relationship releas
relev reli reliabl remain remark remov render replac report repres represent reproduc
requir research residu resolut resolv resourc respect respons restrict retain retriev
reveal review reward rich rigor risk robot robust role rotat rout rule run safeti same
sampl scalabl scale scenario scene scheme scienc scientif score search second segment
select self semant sens sensit separ sequenc sequenti seri serv set sever shape share
shift short shot should signal signific similar simpl simul simultan sinc singl six size
small smaller social solut solv some sourc space span spars spatial special specif
spectra spectral spectrum speed stabil stabl stage standard star state static statist
stellar step still strategi stream strength strong stronger structur struggl style sub
subject subsequ subset substanti success suffer suffici suggest suit suitabl superior
supervis support suppress surfac surpass survey synthes synthesi synthet system systemat
tackl tailor take target task techniqu technolog telescop temperatur tempor term test
text textual them theoret theori therebi therefor thermal they thought three through
thus time togeth token tool top topolog total toward trace track trade tradit train
trajectori transfer transform transit translat transport treat truth tune turn type
typic uncertainti underscor understand unifi uniform uniqu unit univers universal unlik
unseen updat upon user util valid valu valuabl vari variabl variant variat various
vector veloc veri verif verifi video view vision visual vlms volum wave way weak weight
wherea whether wide wise within without workflow world year yet yield zero
""".split()
)
